"""The real jobs' scripts, run as processes on this machine, outside a cluster.

They need Debian's python3-torch and python3-xgboost; without them every
test fails and says the command that installs them (a skip would let a
machine without them pass what it never ran).
"""

import os
import socket
import subprocess
import sys
import tempfile
import unittest

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

    def test_require_report_fails_without_a_status_endpoint(self):
        code, _, err = self.run_ddp("--steps", "5", "--require-report")
        self.assertEqual(code, 4)
        self.assertIn("KUBEFLOW_TRAINER_SERVER_URL", err)


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
