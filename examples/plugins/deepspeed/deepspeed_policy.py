"""What the DeepSpeed plugin does to a TrainJob, on plain JSON documents.

The runtime says

    mlPolicy:
      numNodes: 2
      deepspeed:
        numProcPerNode: 4        # the slots of each node; default: its GPUs, else 1
        masterPort: 29500        # default 29500, DeepSpeed's own
        nccl:                    # exported to every rank
          debug: INFO            # NCCL_DEBUG: VERSION, WARN, INFO, ABORT or TRACE
          debugSubsys: INIT,NET  # NCCL_DEBUG_SUBSYS
          socketIfname: eth0     # NCCL_SOCKET_IFNAME
          ibDisable: true        # NCCL_IB_DISABLE=1
          p2pDisable: false      # NCCL_P2P_DISABLE=0

and every trainer pod runs DeepSpeed's launcher without SSH:

    deepspeed --no_ssh --node_rank=$(NODE_RANK) --master_addr=$(MASTER_ADDR) \\
        --master_port=$(MASTER_PORT) train.py --deepspeed_config ds.json

For that the plugin
  - sets the trainer step's pod count to the job's node count and merges the
    TrainJob's spec.trainer.env into the trainer container, as every ML
    plugin does;
  - builds a ConfigMap <trainjob>-deepspeed-hostfile whose hostfile lists
    each trainer pod with its slots ("<pod DNS name> slots=4"), and mounts
    it at /job/hostfile, where the launcher looks when --hostfile is not
    given;
  - sets, in the trainer container, DS_HOSTFILE (that path), NODE_RANK (the
    pod's completion index), MASTER_ADDR (the first trainer pod),
    MASTER_PORT, and one NCCL_* variable per nccl setting, and opens the
    master port.

Functions here raise InputError for a problem with the input; the service
turns it into INVALID_ARGUMENT. Validate returns FieldErrors instead.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal, Optional

NAME = "DeepSpeed"
VERSION = "v0.1.0"
POLICY_KEY = "deepspeed"

HOSTFILE_PATH = "/job/hostfile"
HOSTFILE_KEY = "hostfile"
HOSTFILE_VOLUME = "deepspeed-hostfile"
DEFAULT_MASTER_PORT = 29500

TRAINER_STEP = "trainer"
TRAINER_CONTAINERS = ("node", "trainer")
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
RUNTIME_CHECK_ANNOTATION = "trainforge.dev/runtime-check"

POLICY_PATH = "spec.mlPolicy.deepspeed"

# nccl setting -> (variable, type, accepted values or None)
NCCL_SETTINGS: dict[str, tuple[str, type, Optional[tuple[str, ...]]]] = {
    "debug": ("NCCL_DEBUG", str, ("VERSION", "WARN", "INFO", "ABORT", "TRACE")),
    "debugSubsys": ("NCCL_DEBUG_SUBSYS", str, None),
    "socketIfname": ("NCCL_SOCKET_IFNAME", str, None),
    "ibDisable": ("NCCL_IB_DISABLE", bool, None),
    "p2pDisable": ("NCCL_P2P_DISABLE", bool, None),
}
POLICY_FIELDS = ("numProcPerNode", "masterPort", "nccl")
FIXED_ENV = ("DS_HOSTFILE", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT")

JSON = Any
# The bad_value of a FieldError that has none (None is JSON null).
NO_VALUE = object()


class InputError(Exception):
    """A problem with what the host sent: the runtime, the TrainJob or Info."""


@dataclasses.dataclass
class FieldError:
    """A problem with one field, as Kubernetes reports it."""

    type: Literal["INVALID", "REQUIRED", "FORBIDDEN", "NOT_SUPPORTED"]
    field: str
    detail: str
    bad_value: Any = NO_VALUE

    def __str__(self) -> str:
        value = "" if self.bad_value is NO_VALUE else f" {json.dumps(self.bad_value)}"
        return f"{self.field}:{value} {self.detail}"


@dataclasses.dataclass
class Settings:
    """The policy, checked and with its defaults."""

    num_proc_per_node: Optional[int] = None
    master_port: int = DEFAULT_MASTER_PORT
    nccl_env: list[tuple[str, str]] = dataclasses.field(default_factory=list)


def is_int(v: JSON) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def policy_of(info: JSON) -> Optional[JSON]:
    """Returns the runtime's mlPolicy.deepspeed, or None."""
    ml = (info.get("runtimePolicy") or {}).get("mlPolicy") or {}
    return ml.get(POLICY_KEY)


def check_policy(policy: JSON) -> tuple[Settings, list[FieldError]]:
    """Reads the policy and returns it with every problem found in it."""
    s, errs = Settings(), []
    if not isinstance(policy, dict):
        return s, [FieldError("INVALID", POLICY_PATH, "must be an object such as {\"numProcPerNode\": 4}", policy)]
    for key in policy:
        if key not in POLICY_FIELDS:
            errs.append(FieldError("INVALID", f"{POLICY_PATH}.{key}",
                                   f"unknown field; deepspeed takes {', '.join(POLICY_FIELDS)}"))
    n = policy.get("numProcPerNode")
    if n is not None:
        if is_int(n) and n >= 1:
            s.num_proc_per_node = n
        else:
            errs.append(FieldError("INVALID", f"{POLICY_PATH}.numProcPerNode", "must be an integer of at least 1", n))
    port = policy.get("masterPort")
    if port is not None:
        if is_int(port) and 1 <= port <= 65535:
            s.master_port = port
        else:
            errs.append(FieldError("INVALID", f"{POLICY_PATH}.masterPort", "must be a port number, 1 to 65535", port))
    nccl = policy.get("nccl")
    if nccl is not None:
        env, nccl_errs = check_nccl(nccl)
        s.nccl_env, errs = env, errs + nccl_errs
    return s, errs


def check_nccl(nccl: JSON) -> tuple[list[tuple[str, str]], list[FieldError]]:
    path = f"{POLICY_PATH}.nccl"
    if not isinstance(nccl, dict):
        return [], [FieldError("INVALID", path, "must be an object such as {\"debug\": \"INFO\"}", nccl)]
    env, errs = [], []
    for key in nccl:
        if key not in NCCL_SETTINGS:
            errs.append(FieldError("INVALID", f"{path}.{key}", f"unknown field; nccl takes {', '.join(NCCL_SETTINGS)}"))
    # In the order of NCCL_SETTINGS, so that the variables do not depend on
    # the runtime's key order.
    for key, (var, kind, accepted) in NCCL_SETTINGS.items():
        if key not in nccl:
            continue
        v = nccl[key]
        if kind is bool:
            if not isinstance(v, bool):
                errs.append(FieldError("INVALID", f"{path}.{key}", "must be true or false", v))
                continue
            env.append((var, "1" if v else "0"))
        elif not isinstance(v, str) or not v:
            errs.append(FieldError("INVALID", f"{path}.{key}", "must be a non-empty string", v))
        elif accepted and v not in accepted:
            errs.append(FieldError("NOT_SUPPORTED", f"{path}.{key}", f"supported values: {', '.join(accepted)}", v))
        else:
            env.append((var, v))
    return env, errs


def settings(info: JSON) -> Settings:
    """Returns the checked policy, or raises InputError with its problems."""
    s, errs = check_policy(policy_of(info))
    if errs:
        raise InputError("; ".join(str(e) for e in errs))
    return s


def trainer(info: JSON) -> tuple[JSON, JSON]:
    """Returns the trainer step's PodSet and its main container."""
    for ps in info.get("podSets") or []:
        if ps.get("ancestorStep") == TRAINER_STEP:
            containers = ps.get("containers") or []
            for name in TRAINER_CONTAINERS:
                for c in containers:
                    if c.get("name") == name:
                        return ps, c
            if len(containers) == 1:
                return ps, containers[0]
            raise InputError(f"replicatedJob {ps.get('name')!r} of the trainer step has no trainer container: "
                             "name it \"node\" (or \"trainer\"), or give the pod a single container")
    raise InputError("the runtime has no trainer step: label a replicatedJob "
                     "trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it \"node\" or \"trainer-node\")")


def trainer_spec(job: JSON) -> JSON:
    return ((job.get("spec") or {}).get("trainer")) or {}


def num_nodes(info: JSON, job: JSON) -> int:
    """The TrainJob's spec.trainer.numNodes, else the runtime's
    mlPolicy.numNodes, else 1."""
    n, path = trainer_spec(job).get("numNodes"), "spec.trainer.numNodes"
    if n is None:
        n, path = ((info.get("runtimePolicy") or {}).get("mlPolicy") or {}).get("numNodes"), "spec.mlPolicy.numNodes"
    if n is None:
        return 1
    if not is_int(n) or n < 1:
        raise InputError(f"{path}: {json.dumps(n)} must be an integer of at least 1")
    return n


def gpus(container: JSON) -> int:
    """The GPUs of one node: resources whose name ends in "gpu", from the
    limits when they name one, else from the requests."""
    res = container.get("resources") or {}
    for kind in ("limits", "requests"):
        found = [q for name, q in (res.get(kind) or {}).items() if name.endswith("gpu")]
        if found:
            return sum(quantity(q) for q in found)
    return 0


def quantity(q: JSON) -> int:
    try:
        return int(str(q))
    except ValueError:
        return 0  # GPUs are whole devices; anything else is not a count


def job_num_proc(job: JSON) -> tuple[Optional[int], Optional[str]]:
    """The TrainJob's spec.trainer.numProcPerNode: an integer, or the
    keyword "auto" or "gpu" (the GPU count), and an error message."""
    v = trainer_spec(job).get("numProcPerNode")
    if v is None:
        return None, None
    if isinstance(v, str) and v.isdigit():
        v = int(v)
    if is_int(v):
        return (v, None) if v >= 1 else (None, "must be at least 1")
    if v in ("auto", "gpu"):
        return None, None
    return None, "DeepSpeed runs one process per accelerator: give an integer, \"auto\" or \"gpu\""


def slots(info: JSON, job: JSON, s: Settings) -> int:
    """Processes per node: the TrainJob's numProcPerNode, else the policy's,
    else the GPUs of a node, else 1."""
    n, problem = job_num_proc(job)
    if problem:
        raise InputError(f"spec.trainer.numProcPerNode: {problem}")
    if n is None and trainer_spec(job).get("numProcPerNode") is None:
        n = s.num_proc_per_node
    if n is None:
        n = gpus(trainer(info)[1]) or 1
    return n


def hostfile_name(job: JSON) -> str:
    return f"{job['metadata']['name']}-deepspeed-hostfile"


def upsert(items: list[JSON], item: JSON, same_key) -> None:
    for i, existing in enumerate(items):
        if same_key(existing, item):
            items[i] = item
            return
    items.append(item)


def upsert_env(container: JSON, var: JSON) -> None:
    upsert(container.setdefault("env", []), var, lambda a, b: a.get("name") == b["name"])


def enforce(info: JSON, job: JSON) -> None:
    """EnforceMLPolicy: changes info in place."""
    s = settings(info)
    ps, c = trainer(info)
    ps["count"] = num_nodes(info, job)
    for var in trainer_spec(job).get("env") or []:
        upsert_env(c, var)
    master = first_endpoint(ps)
    upsert_env(c, {"name": "DS_HOSTFILE", "value": HOSTFILE_PATH})
    upsert_env(c, {"name": "NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}})
    upsert_env(c, {"name": "MASTER_ADDR", "value": master})
    upsert_env(c, {"name": "MASTER_PORT", "value": str(s.master_port)})
    for name, value in s.nccl_env:
        upsert_env(c, {"name": name, "value": value})
    upsert(c.setdefault("ports", []), {"containerPort": s.master_port, "protocol": "TCP"},
           lambda a, b: a.get("containerPort") == b["containerPort"] and a.get("protocol", "TCP") == "TCP")
    upsert(ps.setdefault("volumes", []), {"name": HOSTFILE_VOLUME, "configMap": {"name": hostfile_name(job)}},
           lambda a, b: a.get("name") == b["name"])
    upsert(c.setdefault("volumeMounts", []),
           {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_PATH, "subPath": HOSTFILE_KEY, "readOnly": True},
           lambda a, b: a.get("mountPath") == b["mountPath"])


def first_endpoint(ps: JSON) -> str:
    """The DNS name of the trainer step's first pod, which the host lists
    first in the PodSet's endpoints; the pod count does not change it."""
    endpoints = ps.get("endpoints") or []
    if not endpoints:
        raise InputError(f"replicatedJob {ps.get('name')!r} of the trainer step has no pod, "
                         "so it has no first pod to coordinate the others")
    return endpoints[0]


def build(info: JSON, job: JSON) -> list[JSON]:
    """Build: the ConfigMap holding the hostfile."""
    s = settings(info)
    ps, _ = trainer(info)
    n = slots(info, job, s)
    endpoints = ps.get("endpoints") or []
    if not endpoints:
        raise InputError(f"replicatedJob {ps.get('name')!r} of the trainer step has no pods to list in the hostfile")
    metadata: JSON = {"name": hostfile_name(job), "namespace": job["metadata"].get("namespace", "")}
    for key in ("labels", "annotations"):
        if info.get(key):
            metadata[key] = dict(info[key])
    return [{
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {HOSTFILE_KEY: "".join(f"{e} slots={n}\n" for e in endpoints)},
    }]


def legacy_runtime_check(job: JSON) -> bool:
    """Whether a host before protocol 1.3, which sends no ValidateRequest.kind,
    validates a runtime: it marks the stand-in TrainJob with an annotation."""
    return ((job.get("metadata") or {}).get("annotations") or {}).get(RUNTIME_CHECK_ANNOTATION) == "true"


def on_runtime(job: JSON, e: FieldError, runtime: bool) -> FieldError:
    """A problem of the runtime, as it is when the runtime is admitted, else
    on the TrainJob's spec.runtimeRef, the field that chose the runtime."""
    if runtime:
        return e
    ref = ((job.get("spec") or {}).get("runtimeRef") or {}).get("name", "")
    return FieldError("INVALID", "spec.runtimeRef", f"the runtime's {e}", ref)


def template_error(job: JSON, msg: str, runtime: bool) -> FieldError:
    """A problem with the shape of the runtime's template, where the Go
    SDK's RuntimeTemplateError puts it: on the template when the runtime is
    admitted, else on spec.runtimeRef."""
    if runtime:
        return FieldError("REQUIRED", "spec.template.spec.replicatedJobs", msg)
    ref = ((job.get("spec") or {}).get("runtimeRef") or {}).get("name", "")
    return FieldError("INVALID", "spec.runtimeRef", msg, ref)


def validate(info: JSON, job: JSON, runtime: bool = False) -> tuple[list[str], list[FieldError]]:
    """Validate: what is wrong with the runtime's policy and the TrainJob;
    with runtime, a runtime is being admitted and job only stands for it."""
    s, policy_errs = check_policy(policy_of(info))
    errs = [on_runtime(job, e, runtime) for e in policy_errs]
    try:
        trainer(info)
    except InputError as e:
        errs.append(template_error(job, str(e), runtime))
    if runtime:
        return [], errs
    t = trainer_spec(job)
    _, problem = job_num_proc(job)
    if problem:
        errs.append(FieldError("NOT_SUPPORTED" if isinstance(t["numProcPerNode"], str) else "INVALID",
                               "spec.trainer.numProcPerNode", problem, t["numProcPerNode"]))
    reserved = list(FIXED_ENV) + [name for name, _ in s.nccl_env]
    for i, var in enumerate(t.get("env") or []):
        if var.get("name") in reserved:
            errs.append(FieldError("FORBIDDEN", f"spec.trainer.env[{i}].name",
                                   f"{var['name']} is set by the {NAME} plugin, which sets {', '.join(reserved)} itself; "
                                   "remove it from spec.trainer.env"))
    return [], errs
