"""The real jobs' scripts, run as processes on this machine, outside a cluster.

They need Debian's python3-torch and python3-xgboost; without them every
test fails and says the command that installs them (a skip would let a
machine without them pass what it never ran).
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
PROGRESS = os.path.join(os.path.dirname(SCRIPTS), "progress")
INSTALL = "apt-get install python3-torch python3-xgboost"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need(module):
    try:
        __import__(module)
    except ImportError as e:
        raise AssertionError(f"{e}: the real jobs need Debian's PyTorch and XGBoost; install them with\n\n    {INSTALL}\n")


def start(script, args, env):
    """Starts a script as a pod would: only the given variables, and the progress module on the path."""
    full = {"PATH": "/usr/bin:/bin", "PYTHONPATH": PROGRESS, "HOME": tempfile.gettempdir()}
    full.update(env)
    return subprocess.Popen([sys.executable, os.path.join(SCRIPTS, script), *args], env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def finish(proc):
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


class TrainDDPTest(unittest.TestCase):
    def setUp(self):
        need("torch")
        self.checkpoints = tempfile.mkdtemp()

    def run_ddp(self, *args, attempt="0", env=None):
        # One process, as the Torch plugin's variables describe a one-pod job.
        pet = {"PET_NNODES": "1", "PET_NODE_RANK": "0", "PET_MASTER_ADDR": "127.0.0.1",
               "PET_MASTER_PORT": str(free_port()), "RESTART_ATTEMPT": attempt}
        pet.update(env or {})
        return finish(start("train_ddp.py", ["--checkpoint-dir", self.checkpoints, "--checkpoint-every", "10", *args], pet))

    def test_trains_from_the_torch_plugins_variables_and_checks_the_world_size(self):
        code, out, err = self.run_ddp("--steps", "20", "--expect-world-size", "1")
        self.assertEqual(code, 0, err)
        self.assertIn("rank 0 of 1", out)
        self.assertIn("parameters identical on all 1 ranks", out)
        self.assertTrue(os.path.exists(os.path.join(self.checkpoints, "checkpoint.pt")))

        code, _, err = self.run_ddp("--steps", "20", "--expect-world-size", "2")
        self.assertEqual(code, 3)
        self.assertIn("world size 1, expected 2", err)

    def test_exits_with_the_code_on_the_attempt_asked_then_resumes_from_the_checkpoint(self):
        args = ["--steps", "30", "--fail-at-step", "15", "--fail-exit-code", "134", "--fail-on-attempt", "0"]
        code, out, err = self.run_ddp(*args, attempt="0")
        self.assertEqual(code, 134, out + err)
        code, out, err = self.run_ddp(*args, attempt="1")
        self.assertEqual(code, 0, err)
        self.assertIn("resumed from the checkpoint of step 10", out)
        self.assertIn("trained to step 30", out)

    def test_a_python_exception_ends_it_with_a_traceback(self):
        code, _, err = self.run_ddp("--steps", "10", "--raise-at-step", "3")
        self.assertEqual(code, 1)
        self.assertIn("Traceback (most recent call last):", err)
        self.assertIn("RuntimeError: a bug at step 3", err)

    def test_sigterm_stops_it_checkpointed_and_the_next_start_redoes_no_step(self):
        import signal
        import time
        steplog = os.path.join(self.checkpoints, "steps.log")
        pet = {"PET_NNODES": "1", "PET_NODE_RANK": "0", "PET_MASTER_ADDR": "127.0.0.1",
               "PET_MASTER_PORT": str(free_port()), "RESTART_ATTEMPT": "0"}
        args = ["--checkpoint-dir", self.checkpoints, "--checkpoint-every", "1000", "--steps", "100000",
                "--min-step-seconds", "0.05", "--step-log", steplog]
        proc = start("train_ddp.py", args, pet)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not os.path.exists(steplog) or read(steplog).count("step ") < 5):
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        code, out, err = finish(proc)
        self.assertEqual(code, 143, out + err)
        self.assertIn("SIGTERM: stopped at step", out)
        events = [line.split() for line in read(steplog).splitlines()]
        self.assertEqual(events[0][0], "start")
        self.assertEqual(events[-1][0], "sigterm", events[-3:])
        stopped = int(events[-1][2])
        self.assertGreaterEqual(stopped, 5)

        code, out, err = finish(start("train_ddp.py", [*args[:5], str(stopped + 3), *args[6:]], pet | {"PET_MASTER_PORT": str(free_port())}))
        self.assertEqual(code, 0, err)
        self.assertIn(f"resumed from the checkpoint of step {stopped}", out)
        restarted = [line.split() for line in read(steplog).splitlines()][len(events):]
        self.assertEqual(restarted[0], ["start", restarted[0][1], str(stopped)])
        self.assertEqual([int(e[2]) for e in restarted if e[0] == "step"], [stopped + 1, stopped + 2, stopped + 3],
                         "the steps after the checkpoint, once")

    def test_require_report_fails_without_a_status_endpoint(self):
        code, _, err = self.run_ddp("--steps", "5", "--require-report")
        self.assertEqual(code, 4)
        self.assertIn("KUBEFLOW_TRAINER_SERVER_URL", err)


class CheckpointTest(unittest.TestCase):
    """train_ddp.py's checkpoint, in the test's process: what every start resumes from."""

    def setUp(self):
        need("torch")
        for d in (SCRIPTS, PROGRESS):
            if d not in sys.path:
                sys.path.insert(0, d)
        import train_ddp
        self.t = train_ddp
        self.dir = tempfile.mkdtemp()

    def test_no_checkpoint_starts_at_step_0(self):
        self.assertEqual(self.t.load_checkpoint(os.path.join(self.dir, "none"), self.t.model()), 0)

    def test_the_latest_checkpoint_wins_and_a_write_cut_short_leaves_it(self):
        import torch
        net = self.t.model()
        self.t.save_checkpoint(self.dir, net, 5)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(1.0)
        self.t.save_checkpoint(self.dir, net, 10)
        # A worker killed while writing the next one leaves its temporary
        # file, never a torn checkpoint.
        with open(os.path.join(self.dir, self.t.CHECKPOINT + ".tmp"), "wb") as f:
            f.write(b"cut short")
        fresh = self.t.model()
        self.assertEqual(self.t.load_checkpoint(self.dir, fresh), 10)
        for a, b in zip(net.parameters(), fresh.parameters()):
            self.assertTrue(torch.equal(a, b))


class ElasticStartTest(unittest.TestCase):
    """Each start of train_ddp.py, as an elastic job's resizes start it: its world size, the step it resumes at."""

    def setUp(self):
        need("torch")
        self.checkpoints = tempfile.mkdtemp()

    def run_world(self, world, *args):
        port = str(free_port())
        procs = [start("train_ddp.py", ["--checkpoint-dir", self.checkpoints, "--checkpoint-every", "5", *args], {
            "PET_NNODES": str(world), "PET_NODE_RANK": str(rank), "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": port,
        }) for rank in range(world)]
        outs = []
        for rank, proc in enumerate(procs):
            code, out, err = finish(proc)
            self.assertEqual(code, 0, f"rank {rank}: {out}{err}")
            outs.append(out)
        return outs

    def test_a_start_at_another_world_size_goes_on_from_the_checkpoint(self):
        (out,) = self.run_world(1, "--steps", "12")
        self.assertIn("rank 0: world size 1, starting at global step 0", out)
        # Step 12 ends the run, and is checkpointed though not a multiple of 5.
        for rank, out in enumerate(self.run_world(2, "--steps", "20")):
            self.assertIn(f"rank {rank}: world size 2, starting at global step 12", out)
            self.assertIn(f"rank {rank}: trained to step 20", out)
            self.assertIn("parameters identical on all 2 ranks", out)

    def test_torchrun_forks_it_as_the_elastic_runtime_does(self):
        # torch-elastic-runtime.yaml: torchrun forks the worker and runs the
        # script with runpy (PET_START_METHOD=fork, PET_RUN_PATH=1), from
        # the ConfigMap's directory with report_progress.py beside it and
        # nothing on PYTHONPATH, in another working directory.
        workspace = tempfile.mkdtemp()
        shutil.copy(os.path.join(SCRIPTS, "train_ddp.py"), workspace)
        shutil.copy(os.path.join(PROGRESS, "report_progress.py"), workspace)
        env = {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "PET_START_METHOD": "fork", "PET_RUN_PATH": "1",
               "PET_REDIRECTS": "2", "PET_TEE": "1", "PYTHONUNBUFFERED": "1", "LOGLEVEL": "INFO"}
        proc = subprocess.run(["torchrun", "--standalone", "--nnodes=1", "--nproc_per_node=1",
                               os.path.join(workspace, "train_ddp.py"), "--steps", "8",
                               "--checkpoint-dir", self.checkpoints, "--checkpoint-every", "4"],
                              env=env, cwd="/", capture_output=True, text=True, timeout=300)
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 0, out)
        # torchrun's own record of what it started: the script in its
        # interpreter (run_script_path), not a new python.
        self.assertIn("starting workers for entrypoint: run_script_path", out)
        self.assertIn("trained to step 8", out)

    def test_a_peer_gone_exits_with_the_code_asked_not_the_exceptions(self):
        port = str(free_port())
        procs = [start("train_ddp.py", ["--checkpoint-dir", self.checkpoints, "--steps", "1000000",
                                        "--min-step-seconds", "0.05", "--peer-lost-exit-code", "134",
                                        *(["--fail-at-step", "5", "--fail-exit-code", "7"] if rank == 0 else [])], {
            "PET_NNODES": "2", "PET_NODE_RANK": str(rank), "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": port,
            "RESTART_ATTEMPT": "0",
        }) for rank in range(2)]
        (code0, out0, err0), (code1, out1, err1) = finish(procs[0]), finish(procs[1])
        self.assertEqual(code0, 7, f"rank 0: {out0}{err0}")
        self.assertEqual(code1, 134, f"rank 1, whose peer exited: {out1}{err1}")
        self.assertIn("a peer is gone", err1)

    def test_the_stop_file_ends_it_checkpointed_at_the_next_step(self):
        stop = os.path.join(self.checkpoints, "stop")
        (out,) = self.run_world(1, "--steps", "8")
        open(stop, "w").close()
        for rank, out in enumerate(self.run_world(2, "--steps", "1000000", "--stop-file", stop)):
            self.assertIn(f"rank {rank}: world size 2, starting at global step 8", out)
            self.assertIn(f"rank {rank}: stopping at step 9: {stop} appeared", out)
        os.remove(stop)
        (out,) = self.run_world(1, "--steps", "10")
        self.assertIn("rank 0: world size 1, starting at global step 9", out)


class CheckpointReportTest(unittest.TestCase):
    """What train_ddp.py reports of its checkpoints, and where it writes them."""

    def setUp(self):
        need("torch")
        for d in (SCRIPTS, PROGRESS):
            if d not in sys.path:
                sys.path.insert(0, d)
        import train_ddp
        import report_progress
        self.t, self.r = train_ddp, report_progress

    def test_the_checkpoint_dir_is_the_runtimes(self):
        env = dict(os.environ, TRAINFORGE_CHECKPOINT_DIR="/mnt/ckpt", CHECKPOINT_DIR="/other")
        with unittest.mock.patch.dict(os.environ, env, clear=True):
            self.assertEqual(self.t.parse_args([]).checkpoint_dir, "/mnt/ckpt")
            self.assertEqual(self.r.checkpoint_dir(), "/mnt/ckpt")
        with unittest.mock.patch.dict(os.environ, {"CHECKPOINT_DIR": "/other"}, clear=True):
            self.assertEqual(self.t.parse_args([]).checkpoint_dir, "/other")
            self.assertIsNone(self.r.checkpoint_dir())
            self.assertEqual(self.r.checkpoint_grace_seconds(), 30)

    def test_a_saved_checkpoint_goes_with_the_next_report_until_one_is_applied(self):
        sent = []
        answers = [(429, {"message": "Too many updates"}), (200, {}), (200, {})]

        def fake_report(**kwargs):
            sent.append(kwargs.get("checkpoint"))
            return answers[len(sent) - 1]

        reporter = self.t.Reporter(0, False)
        reporter.saved(20, "/ckpt/checkpoint.pt")
        with unittest.mock.patch.object(self.t, "report", fake_report):
            for _ in range(3):
                reporter(50, 10, {"loss": "0.1"}, final=True)
        want = {"step": 20, "path": "/ckpt/checkpoint.pt"}
        self.assertEqual([c and {k: c[k] for k in ("step", "path")} for c in sent], [want, want, None])
        self.assertIsNotNone(sent[0]["time"], "the time it was saved goes with it")

    def test_a_checkpoint_saved_is_reported_sooner_than_the_next_periodic_report(self):
        calls = []

        def fake_report(**kwargs):
            calls.append(kwargs)
            return 200, {}

        now = [1000.0]
        reporter = self.t.Reporter(10, False, soonest=1.1)
        with unittest.mock.patch.object(self.t, "report", fake_report), \
                unittest.mock.patch.object(self.t.time, "monotonic", lambda: now[0]):
            reporter(10, 90, {"step": 1})
            now[0] += 1.5
            reporter(11, 89, {"step": 2})
            self.assertEqual(len(calls), 1, "no checkpoint: the next report waits the 10 s")
            reporter.saved(2, "/ckpt/checkpoint.pt")
            now[0] += 0.5
            reporter(11, 88, {"step": 3})
            self.assertEqual(len(calls), 2, "a checkpoint goes 1.1 s after the last post")
            self.assertEqual(calls[1]["checkpoint"]["step"], 2)
            now[0] += 1.5
            reporter(12, 87, {"step": 4})
            self.assertEqual(len(calls), 2, "once it is in, reports wait the 10 s again")
            now[0] = 1000 + 12.1
            reporter(12, 86, {"step": 5})
            reporter.saved(5, "/ckpt/checkpoint.pt")
            now[0] += 0.5
            reporter(12, 85, {"step": 6})
            self.assertEqual(len(calls), 3, "never sooner than 1.1 s after the last post: the endpoint's limit")
            now[0] += 0.7
            reporter(12, 84, {"step": 7})
        self.assertEqual([c["checkpoint"] and c["checkpoint"]["step"] for c in calls], [None, 2, None, 5])
        self.assertEqual(self.t.Reporter(0.5, False, soonest=1.1).soonest, 0.5, "never later than a periodic report")

    def test_the_checkpoint_of_a_sigterm_waits_out_the_endpoints_limit_not_a_refusal(self):
        calls = []
        now = [1000.0]

        def fake_report(**kwargs):
            calls.append((now[0], kwargs))
            return 200, {}

        def fake_sleep(seconds):
            now[0] += seconds

        reporter = self.t.Reporter(2, False, soonest=1.1)
        with unittest.mock.patch.object(self.t, "report", fake_report), \
                unittest.mock.patch.object(self.t.time, "monotonic", lambda: now[0]), \
                unittest.mock.patch.object(self.t.time, "sleep", fake_sleep):
            reporter(10, 90, {"step": 1})
            now[0] += 0.4
            reporter.saved(2, "/ckpt/checkpoint.pt")
            reporter.checkpoint_alone()
        self.assertEqual(len(calls), 2)
        self.assertAlmostEqual(calls[1][0] - calls[0][0], 1.1, msg="posted 1.1 s after the report before it, not at once")
        self.assertEqual(calls[1][1], {"checkpoint": calls[1][1]["checkpoint"]}, "the checkpoint alone")
        self.assertEqual(calls[1][1]["checkpoint"]["step"], 2)

    def test_a_periodic_report_refused_as_too_soon_is_dropped_not_retried(self):
        calls = []
        answers = [(429, {"message": "Too many updates"}), (200, {})]

        def fake_report(**kwargs):
            calls.append(kwargs)
            return answers[len(calls) - 1]

        reporter = self.t.Reporter(0, True)  # --require-report: a refusal is fatal, but not a 429
        reporter.saved(20, "/ckpt/checkpoint.pt")
        with unittest.mock.patch.object(self.t, "report", fake_report), \
                unittest.mock.patch.object(self.t, "fatal", side_effect=AssertionError("fatal")):
            reporter(50, 10, {"loss": "0.1"})
            self.assertFalse(calls[0]["retry_429"], "a periodic report waits for no retry in the training loop")
            self.assertIsNotNone(reporter.checkpoint, "the checkpoint goes with the next report")
            reporter(100, 0, {"loss": "0.1"}, final=True)
        self.assertTrue(calls[1]["retry_429"], "the final report is retried")
        self.assertEqual(calls[1]["checkpoint"]["step"], 20)
        self.assertIsNone(reporter.checkpoint)

    def test_the_body_of_a_checkpoint(self):
        import datetime
        import json
        now = datetime.datetime(2026, 12, 1, 18, 0, tzinfo=datetime.timezone.utc)
        alone = json.loads(self.r.status_body(now=now, checkpoint={"step": 1200, "path": "/ckpt/step-1200"}))
        self.assertEqual(alone, {"checkpoint": {"step": 1200, "path": "/ckpt/step-1200", "time": "2026-12-01T18:00:00Z"}},
                         "a checkpoint alone leaves the progress as it was: no trainerStatus")
        both = json.loads(self.r.status_body(progress=45, now=now, checkpoint={"step": 1200}))
        self.assertEqual(both["checkpoint"], {"step": 1200, "time": "2026-12-01T18:00:00Z"})
        self.assertEqual(both["trainerStatus"]["progressPercentage"], 45)
        self.assertNotIn("checkpoint", json.loads(self.r.status_body(progress=45, now=now)))
        saved = datetime.datetime(2026, 12, 1, 17, 59, 30, tzinfo=datetime.timezone.utc)
        dated = json.loads(self.r.status_body(progress=45, now=now, checkpoint={"step": 1200, "time": saved}))
        self.assertEqual(dated["checkpoint"]["time"], "2026-12-01T17:59:30Z", "when it was saved, not when reported")
        self.assertEqual(dated["trainerStatus"]["lastUpdatedTime"], "2026-12-01T18:00:00Z")


    def test_the_body_of_a_run_start(self):
        import datetime
        import json
        now = datetime.datetime(2026, 12, 1, 18, 0, tzinfo=datetime.timezone.utc)
        alone = json.loads(self.r.status_body(now=now, run_start={"from_step": 40}))
        self.assertEqual(alone, {"runStart": {"fromStep": 40, "time": "2026-12-01T18:00:00Z"}},
                         "a run start alone leaves the progress as it was: no trainerStatus")
        both = json.loads(self.r.status_body(now=now, checkpoint={"step": 40}, run_start={"from_step": 40}))
        self.assertEqual(set(both), {"checkpoint", "runStart"})
        self.assertNotIn("runStart", json.loads(self.r.status_body(progress=45, now=now)))

    def test_each_start_goes_with_the_first_progress_report_in_one_post(self):
        import datetime
        answers, calls = [429, 200, 200], []

        def fake_report(**kwargs):
            calls.append(kwargs)
            return answers[len(calls) - 1], {}

        reporter = self.t.Reporter(0, False)
        with unittest.mock.patch.object(self.t, "report", fake_report):
            before = datetime.datetime.now(datetime.timezone.utc)
            reporter.run_started(40)
            self.assertEqual(calls, [], "no post of its own: the endpoint takes one post a second")
            reporter(4, 10, {"step": 41})
            reporter(4, 9, {"step": 42})
            reporter(4, 8, {"step": 43})
        self.assertEqual([c["run_start"] and c["run_start"]["from_step"] for c in calls], [40, 40, None],
                         "with the first report, again with the next when refused (429), then no more")
        self.assertGreaterEqual(calls[0]["run_start"]["time"], before, "the time the run started, not the report's")
        self.assertFalse(calls[0]["retry_429"], "a periodic report does not wait in the training loop")


class TrainXGBoostTest(unittest.TestCase):
    def setUp(self):
        need("xgboost")

    def test_two_workers_form_a_collective_from_the_xgboost_plugins_variables(self):
        port = str(free_port())
        procs = [start("train_xgboost.py", ["--rounds", "5", "--rows", "500"], {
            "DMLC_TRACKER_URI": "127.0.0.1", "DMLC_TRACKER_PORT": port,
            "DMLC_TASK_ID": str(task), "DMLC_NUM_WORKER": "2",
        }) for task in (0, 1)]
        for task, proc in enumerate(procs):
            code, out, err = finish(proc)
            self.assertEqual(code, 0, f"task {task}: {out}{err}")
            self.assertIn("the same model on all 2 workers", out)

    def test_fails_without_the_variables(self):
        code, _, err = finish(start("train_xgboost.py", [], {}))
        self.assertEqual(code, 3)
        self.assertIn("DMLC_TRACKER_URI", err)


if __name__ == "__main__":
    unittest.main()
