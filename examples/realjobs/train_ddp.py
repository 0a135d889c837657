#!/usr/bin/env python3
"""A small real PyTorch DDP training job, for CPUs, that Trainforge's examples run.

It learns a synthetic regression (a fixed random linear map plus noise) with
a two-layer network, on every rank at once with DistributedDataParallel over
gloo, and:

- checkpoints rank 0's model every --checkpoint-every steps into
  --checkpoint-dir (atomically), and resumes from the checkpoint it finds
  there, so that a restarted job goes on where it stopped;
- says at every start the world size and the global step it starts at
  ("rank R: world size W, starting at global step S"), on every rank: an
  elastic job (torchrun --nnodes=MIN:MAX) starts again at each resize,
  with the world size of the new group, and goes on from the checkpoint,
  which must then be on storage every node reads;
- reports its progress, the loss and the time left from rank 0 through the
  TrainJob's status endpoint (Kubeflow Trainer's protocol, with
  report_progress.py from examples/progress, standard library only), and
  each checkpoint it saved as soon as the endpoint takes a post (Trainforge's
  status.lastCheckpoint; the checkpoint directory defaults to
  $TRAINFORGE_CHECKPOINT_DIR, which a runtime with a checkpoint volume sets),
  and at each start the step it starts from (status.lastRunStart, which
  the goodput account reads);
- at the end checks that every rank holds the same parameters (DDP's
  promise) and, with --expect-world-size, that the job had that many ranks;
  either failing ends it with exit code 3.

Under torchrun it takes the rank and world size from torchrun. Run directly
(one process per pod) it reads the variables Trainforge's Torch plugin
writes for torchrun: PET_NNODES is the world size, PET_NODE_RANK the rank,
PET_MASTER_ADDR and PET_MASTER_PORT the rendezvous.

For the restart policy's tests it can also end itself as a real failure
would: --fail-at-step N exits with --fail-exit-code (134, as a process that
NCCL aborts) on the JobSet's restart attempt --fail-on-attempt, which it
reads from $RESTART_ATTEMPT (the pod label jobset.sigs.k8s.io/restart-attempt
through the downward API); --raise-at-step N raises a Python exception.
With --peer-lost-exit-code N, a collective that fails because another
rank's process is gone exits with N rather than the exception's 1, as a
process that NCCL's watchdog aborts does.
With --stop-file PATH it ends at the step after PATH appears, before
--steps: how a test says that an elastic job has resized enough.

On SIGTERM (a suspension, a preemption, a resize, a pod deleted: the
pod's grace period, $TRAINFORGE_CHECKPOINT_GRACE_SECONDS, is the time it
has) every rank stops at the same step, rank 0 saves a checkpoint and
reports it alone (no progress: a report after SIGTERM is no new run), and
the processes exit with 143, as a process ended by SIGTERM does. The next
start resumes from it, so the disruption redoes no step.

With --step-log PATH rank 0 appends to PATH one line per event, with the
wall-clock time: "start T STEP" at each start (the step it resumes from),
"step T STEP" after each step, "sigterm T STEP" when it stops on SIGTERM.
Tests compute from it what a job's goodput should be.
"""

import argparse
import datetime
import hashlib
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

# torchrun --run-path (the elastic runtime's PET_RUN_PATH) runs this file in
# its own interpreter with runpy, which does not put the file's directory
# on sys.path as `python3 train_ddp.py` does; report_progress.py is beside it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_progress import report  # noqa: E402

CHECKPOINT = "checkpoint.pt"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200, help="training steps in all")
    p.add_argument("--batch", type=int, default=64, help="samples per rank and step")
    p.add_argument("--min-step-seconds", type=float, default=0.0,
                   help="pace each step to at least this long, so that a demo can be watched")
    p.add_argument("--checkpoint-dir", default=os.environ.get("TRAINFORGE_CHECKPOINT_DIR") or os.environ.get("CHECKPOINT_DIR", "/checkpoints"))
    p.add_argument("--checkpoint-every", type=int, default=20)
    p.add_argument("--report-every-seconds", type=float, default=2.0,
                   help="at most one progress report per this many seconds (the endpoint refuses more than one a second)")
    p.add_argument("--checkpoint-report-seconds", type=float, default=1.1,
                   help="a checkpoint saved is reported at the first step this long after the last post, not "
                        "--report-every-seconds: the endpoint's one post a second, and a margin for the posts' latency")
    p.add_argument("--require-report", action="store_true",
                   help="fail (exit 4) when the status endpoint refuses or cannot be reached, instead of training on")
    p.add_argument("--expect-world-size", type=int, help="fail (exit 3) unless the job has this many ranks")
    p.add_argument("--fail-at-step", type=int, help="exit with --fail-exit-code at this step, on attempt --fail-on-attempt")
    p.add_argument("--fail-exit-code", type=int, default=134)
    p.add_argument("--fail-on-attempt", default="0")
    p.add_argument("--raise-at-step", type=int, help="raise a Python exception at this step")
    p.add_argument("--peer-lost-exit-code", type=int,
                   help="exit with this code when a collective fails because a peer is gone (as NCCL's watchdog "
                        "aborts the process), instead of the exception's exit code 1")
    p.add_argument("--stop-file", help="end the training (checkpointed, as at --steps) at the step after this file appears")
    p.add_argument("--step-log", help="rank 0 appends a line per start, step and SIGTERM, with its wall-clock time")
    return p.parse_args(argv)


def init_process_group():
    """Joins the job: torchrun's variables when torchrun started us, else the Torch plugin's."""
    if "RANK" not in os.environ and "PET_NNODES" in os.environ:
        os.environ["RANK"] = os.environ["PET_NODE_RANK"]
        os.environ["WORLD_SIZE"] = os.environ["PET_NNODES"]
        os.environ["MASTER_ADDR"] = os.environ["PET_MASTER_ADDR"]
        os.environ["MASTER_PORT"] = os.environ["PET_MASTER_PORT"]
    dist.init_process_group("gloo")
    return dist.get_rank(), dist.get_world_size()


def model():
    # The same initial weights on every rank are not needed (DDP broadcasts
    # rank 0's), but they make a run reproducible.
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))


def batches(rank, batch, first=0):
    """Endless batches of the synthetic regression, a different stream per rank and start."""
    target = torch.Generator().manual_seed(1234)
    w = torch.randn(32, 1, generator=target)
    g = torch.Generator().manual_seed(1_000_003 * first + rank + 1)
    while True:
        x = torch.randn(batch, 32, generator=g)
        y = x @ w + 0.1 * torch.randn(batch, 1, generator=g)
        yield x, y


# SGD without momentum keeps no state of its own: the weights and the step
# are the whole checkpoint.
def load_checkpoint(directory, net):
    """The step to start at: the checkpoint's, or 0 without one."""
    path = os.path.join(directory, CHECKPOINT)
    if not os.path.exists(path):
        return 0
    state = torch.load(path)
    net.load_state_dict(state["model"])
    return int(state["step"])


def save_checkpoint(directory, net, step):
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, CHECKPOINT + ".tmp")
    torch.save({"model": net.state_dict(), "step": step}, tmp)
    os.replace(tmp, os.path.join(directory, CHECKPOINT))
    return os.path.join(directory, CHECKPOINT)


class Reporter:
    """Rank 0's progress reports, throttled; a refused one is said, and with --require-report fatal.

    A report goes every `every` seconds; with a checkpoint saved (saved()) and
    not yet reported, one goes `soonest` seconds after the last post instead,
    and the checkpoint with it, until a post is applied. A checkpoint is worth
    the hurry: until the status has it, a node lost would count the work
    since the checkpoint before it as redone (status.goodput), and rank 0's
    node may be the one lost. A periodic report that comes too soon after
    another (429) is dropped, not retried: the retry would wait in the
    training loop, and the next report carries newer progress (and the
    checkpoint). The final report is retried.
    """

    def __init__(self, every, required, soonest=None):
        self.every, self.required, self.last = every, required, 0.0
        self.soonest = every if soonest is None else min(soonest, every)
        self.checkpoint = None
        self.run_start = None

    def saved(self, step, path):
        # The time it was saved, not the time of the report it goes with:
        # the work after it is what a disruption would redo.
        self.checkpoint = {"step": step, "path": path, "time": datetime.datetime.now(datetime.timezone.utc)}

    def run_started(self, step):
        """Keeps that this run starts from step, now, for the first progress report to carry.

        One post at the first step rather than one before it: the status
        endpoint takes one post a second per TrainJob, so a first progress
        report right after a run start of its own was refused (429) and
        dropped, and the run's first seconds of training went unseen until
        the next report. The run start keeps the time it was taken.
        """
        self.run_start = {"from_step": step, "time": datetime.datetime.now(datetime.timezone.utc)}

    def checkpoint_alone(self):
        """Reports the saved checkpoint without progress, as soon as the endpoint takes it.

        It waits out what is left of `soonest` since the last post rather
        than post at once: a post refused as too soon (429) would wait the
        whole second its Retry-After says, with every rank held at the
        barrier behind it.
        """
        if self.checkpoint is not None:
            time.sleep(max(0.0, self.last + self.soonest - time.monotonic()))
            self.last = time.monotonic()
            answer = report(checkpoint=self.checkpoint)
            if answer is not None and answer[0] != 200:
                print(f"checkpoint report refused: HTTP {answer[0]} {answer[1].get('message', answer[1])}", flush=True)

    def __call__(self, progress, remaining, metrics, final=False):
        due = self.every if self.checkpoint is None else self.soonest
        if not final and time.monotonic() - self.last < due:
            return
        self.last = time.monotonic()
        answer = report(progress=progress, remaining_seconds=remaining, metrics=metrics, checkpoint=self.checkpoint,
                        run_start=self.run_start, retry_429=final)
        if answer is None:
            if self.required:
                fatal(4, "no status endpoint: KUBEFLOW_TRAINER_SERVER_URL, _CA_CERT and _TOKEN are not set")
            return
        code, body = answer
        if code == 200:
            self.checkpoint = self.run_start = None
        if code == 429 and not final:
            return
        if code != 200:
            print(f"progress report refused: HTTP {code} {body.get('message', body)}", flush=True)
            if self.required:
                fatal(4, f"the status endpoint answered {code}: {body}")


class StepLog:
    """--step-log: one line per start, step and SIGTERM, appended and flushed at once."""

    def __init__(self, path):
        self.f = None
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self.f = open(path, "a", encoding="utf-8")  # pylint: disable=consider-using-with

    def __call__(self, event, step):
        if self.f:
            self.f.write(f"{event} {time.time():.3f} {step}\n")
            self.f.flush()


class Terminated:
    """Whether SIGTERM arrived: the loop stops at the next step, checkpointed."""

    def __init__(self):
        self.at = None
        signal.signal(signal.SIGTERM, self.handle)

    def handle(self, signum, frame):
        if self.at is None:
            self.at = time.monotonic()

    def __bool__(self):
        return self.at is not None


def stop_asked(path):
    return bool(path) and os.path.exists(path)


def fatal(code, message):
    print(f"FATAL: {message}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(code)


def parameters_digest(net):
    flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
    return flat, hashlib.sha256(flat.numpy().tobytes()).hexdigest()[:16]


def main(args):
    rank, world = init_process_group()
    attempt = os.environ.get("RESTART_ATTEMPT", "0")
    print(f"rank {rank} of {world} (restart attempt {attempt}) on {os.uname().nodename}, "
          f"torch {torch.__version__}", flush=True)
    if args.expect_world_size is not None and world != args.expect_world_size:
        fatal(3, f"world size {world}, expected {args.expect_world_size}")

    terminated = Terminated()
    net = model()
    start = torch.zeros(1, dtype=torch.int64)
    if rank == 0:
        start[0] = load_checkpoint(args.checkpoint_dir, net)
    # Rank 0 alone may see the checkpoint (it may live on its node only):
    # the step goes to every rank, and DDP broadcasts rank 0's weights.
    dist.broadcast(start, 0)
    first = int(start[0])
    if first > 0:
        print(f"rank {rank}: resumed from the checkpoint of step {first} in {args.checkpoint_dir}", flush=True)
    # torchrun counts the restarts of its worker group: each resize of an
    # elastic job is one, as is a failure it rides out.
    print(f"rank {rank}: world size {world}, starting at global step {first} "
          f"(torchrun restart {os.environ.get('TORCHELASTIC_RESTART_COUNT', '-')})", flush=True)
    ddp = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()
    data = batches(rank, args.batch, first)
    reporter = Reporter(args.report_every_seconds, args.require_report, args.checkpoint_report_seconds)
    steplog = StepLog(args.step_log if rank == 0 else None)
    steplog("start", first)
    if rank == 0:
        # Every start of the workers is a new run: after a restart the
        # cluster records, and after the ones it does not (an elastic
        # group re-formed without the pod of a lost node).
        reporter.run_started(first)
    began = time.monotonic()
    loss = torch.zeros(())
    last = first
    for step in range(first + 1, args.steps + 1):
        t0 = time.monotonic()
        x, y = next(data)
        opt.zero_grad()
        loss = loss_fn(ddp(x), y)
        loss.backward()
        opt.step()
        # The loss of the whole job, the mean over the ranks, and whether
        # rank 0 saw the stop file: every rank ends at the same step.
        both = torch.stack([loss.detach(), torch.tensor(float(rank == 0 and stop_asked(args.stop_file))),
                            torch.tensor(float(bool(terminated)))])
        dist.all_reduce(both)
        mean, stop, sigterm = both[0] / world, both[1].item() > 0, both[2].item() > 0
        last = step
        steplog("step", step)
        if sigterm:
            # Stopped from outside: a last checkpoint in the grace period,
            # reported alone, then the exit a SIGTERM would have caused.
            if rank == 0:
                reporter.saved(step, save_checkpoint(args.checkpoint_dir, net, step))
                reporter.checkpoint_alone()
                steplog("sigterm", step)
                took = time.monotonic() - terminated.at if terminated else 0.0
                print(f"rank 0: SIGTERM: stopped at step {step}, checkpoint saved and reported "
                      f"{took:.1f}s after it (grace {os.environ.get('TRAINFORGE_CHECKPOINT_GRACE_SECONDS', '-')}s)", flush=True)
            dist.barrier()
            os._exit(143)
        if args.raise_at_step == step:
            raise RuntimeError(f"a bug at step {step}: the loss {mean.item():.4f} is not what it should be")
        final = stop or step == args.steps
        if step % args.checkpoint_every == 0 or final:
            if rank == 0:
                reporter.saved(step, save_checkpoint(args.checkpoint_dir, net, step))
            dist.barrier()
        if args.fail_at_step == step and attempt == args.fail_on_attempt:
            print(f"rank {rank}: failing at step {step} with exit code {args.fail_exit_code}, "
                  f"as on attempt {attempt} it was asked to", flush=True)
            os._exit(args.fail_exit_code)
        if args.min_step_seconds:
            time.sleep(max(0.0, args.min_step_seconds - (time.monotonic() - t0)))
        if rank == 0:
            done = step - first
            left = (time.monotonic() - began) / done * (args.steps - step)
            if step % 10 == 0 or final:
                print(f"step {step}/{args.steps} loss {mean.item():.4f}", flush=True)
            reporter(100 if final else step * 100 // args.steps, 0 if final else left,
                     {"loss": f"{mean.item():.4f}", "step": step, "world_size": world}, final=final)
        if stop:
            print(f"rank {rank}: stopping at step {step}: {args.stop_file} appeared", flush=True)
            break

    if rank == 0 and first >= args.steps:
        reporter(100, 0, {"step": args.steps, "world_size": world}, final=True)
    flat, digest = parameters_digest(net)
    gathered = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    differ = [r for r, p in enumerate(gathered) if not torch.equal(p, gathered[0])]
    if differ:
        fatal(3, f"ranks {differ} hold other parameters than rank 0 after training")
    print(f"rank {rank}: trained to step {last}, final loss {loss.item():.4f}; "
          f"parameters identical on all {world} ranks (sha256 {digest})", flush=True)
    dist.destroy_process_group()


def peer_lost(e):
    """Whether a collective's error says that a peer process is gone (gloo's words for it)."""
    return isinstance(e, RuntimeError) and any(
        w in str(e) for w in ("Connection closed by peer", "Connection reset by peer", "Broken pipe"))


def run(argv=None):
    args = parse_args(argv)
    try:
        main(args)
    except RuntimeError as e:
        if args.peer_lost_exit_code is None or not peer_lost(e):
            raise
        fatal(args.peer_lost_exit_code, f"a peer is gone: {e}")


if __name__ == "__main__":
    run()
