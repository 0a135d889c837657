#!/usr/bin/env python3
"""A small real distributed XGBoost job over XGBoost's collective (Rabit).

Every trainer pod runs it; it needs nothing but the variables Trainforge's
XGBoost plugin writes, as Kubeflow Trainer's does:

  DMLC_TRACKER_URI   the first trainer pod's DNS name, where the tracker runs
  DMLC_TRACKER_PORT  the tracker's port
  DMLC_TASK_ID       this pod's rank (its Job completion index)
  DMLC_NUM_WORKER    the number of workers of the job

The pod of task 0 starts the tracker on its own address, then every pod
joins the collective from the variables alone (XGBoost reads them from the
environment) and trains on its own shard of a synthetic classification
task: the tree histograms are summed over the workers at every round. At the
end it checks that the job had DMLC_NUM_WORKER workers and that every worker
built the same model, and exits with 3 if not.
"""

import argparse
import errno
import hashlib
import os
import socket
import sys
import time

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--rows", type=int, default=2000, help="rows of this worker's shard")
    return p.parse_args(argv)


def shard(task, rows):
    """This worker's rows of one synthetic task: the label is a fixed linear rule, with noise."""
    w = np.random.default_rng(1234).normal(size=10)
    rng = np.random.default_rng(task + 1)
    x = rng.normal(size=(rows, 10))
    y = (x @ w + rng.normal(scale=0.5, size=rows) > 0).astype(np.float32)
    return x, y


def fail(message):
    print(f"FATAL: {message}", file=sys.stderr, flush=True)
    sys.exit(3)


def start_tracker(address, port, workers, patience=120):
    """Starts the tracker, waiting while the port is still held.

    The tracker binds without SO_REUSEADDR: where pods share the host's
    network (the process nodes of Trainforge's simulated cluster), the
    connections of a job that just ended on the same address and port hold
    it for up to a minute (TIME_WAIT).
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            tracker = RabitTracker(host_ip=address, n_workers=workers, port=port, sortby="task")
            break
        except OSError as e:
            if e.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise
            print(f"tracker port {address}:{port} still in use, trying again", flush=True)
            time.sleep(2)
    tracker.start(workers)
    return tracker


def main(argv=None):
    args = parse_args(argv)
    env = {k: os.environ.get(k) for k in ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")}
    missing = [k for k, v in env.items() if not v]
    if missing:
        fail(f"{', '.join(missing)} not set: run me in a TrainJob of a runtime with mlPolicy.xgboost")
    task, workers = int(env["DMLC_TASK_ID"]), int(env["DMLC_NUM_WORKER"])
    print(f"task {task} of {workers} workers; tracker {env['DMLC_TRACKER_URI']}:{env['DMLC_TRACKER_PORT']}", flush=True)

    tracker = None
    if task == 0:
        # The tracker listens on this pod's address, the one DMLC_TRACKER_URI
        # names, as the other pods reach it.
        address = socket.gethostbyname(env["DMLC_TRACKER_URI"])
        tracker = start_tracker(address, int(env["DMLC_TRACKER_PORT"]), workers)

    # No arguments: the collective takes its setup from the DMLC_* variables.
    with collective.CommunicatorContext():
        rank, world = collective.get_rank(), collective.get_world_size()
        print(f"task {task}: rank {rank} in a collective of {world}", flush=True)
        if world != workers:
            fail(f"the collective has {world} workers, DMLC_NUM_WORKER says {workers}")
        x, y = shard(task, args.rows)
        train = xgb.DMatrix(x, label=y)
        history = {}
        booster = xgb.train(
            {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 4, "eval_metric": "logloss"},
            train, num_boost_round=args.rounds, evals=[(train, "train")], evals_result=history, verbose_eval=5,
        )
        losses = history["train"]["logloss"]
        # Every worker must have built the same trees: compare the digests
        # of the models, as integers, through the collective.
        digest = hashlib.sha256(booster.save_raw("json")).digest()
        mine = np.frombuffer(digest, dtype=np.uint8).astype(np.float64)
        if not np.array_equal(collective.allreduce(mine.copy(), collective.Op.MAX),
                              collective.allreduce(mine.copy(), collective.Op.MIN)):
            fail("the workers built different models")
        print(f"task {task}: trained {args.rounds} rounds, logloss {losses[0]:.4f} -> {losses[-1]:.4f}; "
              f"the same model on all {world} workers (sha256 {digest.hex()[:16]})", flush=True)
    if tracker is not None:
        tracker.join()


if __name__ == "__main__":
    main()
