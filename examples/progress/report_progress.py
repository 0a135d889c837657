#!/usr/bin/env python3
"""Report a TrainJob's training progress, with the Python standard library only.

Kubeflow Trainer's protocol, as Trainforge serves it (docs/progress.md): the
TrainJobStatus plugin gives every trainer container

  KUBEFLOW_TRAINER_SERVER_URL      the TrainJob's status endpoint (HTTPS)
  KUBEFLOW_TRAINER_SERVER_CA_CERT  the CA file to verify it with
  KUBEFLOW_TRAINER_SERVER_TOKEN    the token file to send (the kubelet renews it)

and report() POSTs {"trainerStatus": {...}} there. Use it as a module:

    from report_progress import report
    report(progress=45, remaining_seconds=3600, metrics={"loss": 0.2347})

or from a shell:

    python3 report_progress.py --progress 45 --remaining 3600 --metric loss=0.2347

Checkpoints (Trainforge's superset, docs/progress.md#checkpoints): a runtime
that names a checkpoint volume gives the trainer TRAINFORGE_CHECKPOINT_DIR
(where to write them) and TRAINFORGE_CHECKPOINT_GRACE_SECONDS (how long it
has after SIGTERM to write one). Report each checkpoint once it is complete,
and the TrainJob's status.lastCheckpoint records it:

    from report_progress import checkpoint_dir, report_checkpoint
    path = os.path.join(checkpoint_dir(), "step-1200")
    ...  # write the checkpoint to path
    report_checkpoint(1200, path)

    python3 report_progress.py --checkpoint-step 1200 --checkpoint-path /checkpoints/step-1200

Run starts (Trainforge's superset, docs/progress.md#run-starts): report at
each start of the training processes the step it starts from (the
checkpoint it resumed, 0 from nothing), alone before the first step or,
better, with the first progress report (report(..., run_start=...): the
endpoint takes one post a second); the TrainJob's
status.lastRunStart records it, and its goodput account counts a run that
starts while the job trains as a restart, which no other record shows when
an elastic job's workers re-form their group or a launcher restarts them
in place:

    from report_progress import report_run_start
    report_run_start(1200)

Outside a TrainJob (no variables) report() does nothing and returns None.
A failure is returned, never raised: reporting must not stop the training.
"""

import argparse
import datetime
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

URL_ENV = "KUBEFLOW_TRAINER_SERVER_URL"
CA_ENV = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
TOKEN_ENV = "KUBEFLOW_TRAINER_SERVER_TOKEN"
CHECKPOINT_DIR_ENV = "TRAINFORGE_CHECKPOINT_DIR"
CHECKPOINT_GRACE_ENV = "TRAINFORGE_CHECKPOINT_GRACE_SECONDS"


def checkpoint_dir():
    """Where to write checkpoints, or None when the runtime names no checkpoint volume."""
    return os.environ.get(CHECKPOINT_DIR_ENV) or None


def checkpoint_grace_seconds(default=30):
    """The seconds between SIGTERM and SIGKILL, in which to write a last checkpoint."""
    try:
        return int(os.environ[CHECKPOINT_GRACE_ENV])
    except (KeyError, ValueError):
        return default


def rfc3339(t):
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_body(progress=None, remaining_seconds=None, metrics=None, now=None, checkpoint=None, run_start=None):
    """The JSON body of one report; metrics is a dict of name to value.

    checkpoint, a dict with "step" and optionally "path" and "time" (a
    datetime: when it was saved; now when absent), adds a checkpoint;
    run_start, a dict with "from_step" and optionally "time" (when the run
    started; now when absent), adds a run start. A report of either alone
    sends no trainerStatus, so that the last progress stays as it was.
    """
    now = now or datetime.datetime.now(datetime.timezone.utc)
    body = {}
    if checkpoint is not None:
        body["checkpoint"] = {"step": int(checkpoint["step"]), "time": rfc3339(checkpoint.get("time") or now)}
        if checkpoint.get("path"):
            body["checkpoint"]["path"] = str(checkpoint["path"])
    if run_start is not None:
        body["runStart"] = {"fromStep": int(run_start["from_step"]), "time": rfc3339(run_start.get("time") or now)}
    if body and progress is None and remaining_seconds is None and not metrics:
        return json.dumps(body).encode()
    status = {}
    if progress is not None:
        status["progressPercentage"] = int(progress)
    if remaining_seconds is not None:
        status["estimatedRemainingSeconds"] = int(remaining_seconds)
    if metrics:
        status["metrics"] = [{"name": str(k), "value": str(v)} for k, v in metrics.items()]
    status["lastUpdatedTime"] = rfc3339(now)
    body["trainerStatus"] = status
    return json.dumps(body).encode()


def report_checkpoint(step, path=None, **kwargs):
    """Report a checkpoint the training has completed (report()'s answer)."""
    return report(checkpoint={"step": step, "path": path}, **kwargs)


def report_run_start(from_step, **kwargs):
    """Report that a run starts from from_step, before its first step (report()'s answer)."""
    return report(run_start={"from_step": from_step}, **kwargs)


def report(progress=None, remaining_seconds=None, metrics=None, retry_429=True, timeout=5, checkpoint=None,
           run_start=None):
    """POST one report; returns (HTTP status, answer as a dict), or None outside a TrainJob.

    On 429 (another report of the TrainJob came too soon) it waits the
    Retry-After seconds and tries once more, so that a final report is not lost.
    """
    url, ca, token_file = os.environ.get(URL_ENV), os.environ.get(CA_ENV), os.environ.get(TOKEN_ENV)
    if not (url and ca and token_file):
        return None
    try:
        context = ssl.create_default_context(cafile=ca)
        for attempt in (1, 2):
            with open(token_file) as f:  # read each time: the kubelet renews it
                token = f.read().strip()
            request = urllib.request.Request(
                url,
                data=status_body(progress, remaining_seconds, metrics, checkpoint=checkpoint, run_start=run_start),
                method="POST",
                headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, context=context, timeout=timeout) as answer:
                    return answer.status, json.load(answer)
            except urllib.error.HTTPError as e:
                if e.code == 429 and retry_429 and attempt == 1:
                    time.sleep(float(e.headers.get("Retry-After", "1")))
                    continue
                body = e.read().decode(errors="replace")
                try:
                    return e.code, json.loads(body)
                except ValueError:
                    return e.code, {"message": body}
    except (OSError, ssl.SSLError) as e:
        return 0, {"message": str(e)}
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description="Report a TrainJob's progress to Trainforge (Kubeflow Trainer's protocol).")
    parser.add_argument("--progress", type=int, help="percent done, 0 to 100")
    parser.add_argument("--remaining", type=int, help="seconds left")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME=VALUE", help="a metric; repeat for more")
    parser.add_argument("--checkpoint-step", type=int, help="the step of a checkpoint just completed")
    parser.add_argument("--checkpoint-path", help="where that checkpoint was written")
    parser.add_argument("--run-start", type=int, metavar="FROM_STEP",
                        help="a run starts, from this step (the checkpoint it resumed; 0 from nothing)")
    args = parser.parse_args(argv)
    if args.checkpoint_path and args.checkpoint_step is None:
        parser.error("--checkpoint-path needs --checkpoint-step")
    metrics = {}
    for m in args.metric:
        name, sep, value = m.partition("=")
        if not sep or not name or not value:
            parser.error("--metric %r: give NAME=VALUE, for example loss=0.25" % m)
        metrics[name] = value
    checkpoint = None
    if args.checkpoint_step is not None:
        checkpoint = {"step": args.checkpoint_step, "path": args.checkpoint_path}
    run_start = None if args.run_start is None else {"from_step": args.run_start}
    answer = report(args.progress, args.remaining, metrics, checkpoint=checkpoint, run_start=run_start)
    if answer is None:
        print("not in a TrainJob: %s, %s and %s are not set" % (URL_ENV, CA_ENV, TOKEN_ENV), file=sys.stderr)
        return 2
    code, body = answer
    print(code, json.dumps(body))
    return 0 if code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
