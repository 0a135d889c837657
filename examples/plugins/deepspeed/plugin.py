#!/usr/bin/python3
"""DeepSpeed, a Trainforge plugin written in Python.

It owns the vendor mlPolicy key "deepspeed" and prepares a TrainJob's
trainer pods for DeepSpeed's multi-node launcher (see deepspeed_policy.py for
what it sets). It is also the example of a plugin in a language other than
Go: nothing here comes from the Go SDK, only from the protocol of
proto/trainforge/plugin/v1/plugin.proto, whose Python stubs `make generate`
writes to gen/.

Run it with Debian's interpreter, /usr/bin/python3, which sees Debian's
python3-grpcio, python3-protobuf and python3-cryptography; another python3
first on PATH may not:

    plugins:
    - name: DeepSpeed
      external:
        command: /usr/bin/python3
        args: [/plugins/deepspeed/plugin.py]

How the host talks to it, step by step:

 1. Start and handshake (goplugin.py): the host runs the command with the
    handshake cookie, the protocol versions it speaks, a socket directory and
    its client certificate in the environment; the plugin answers on stdout
    with one line naming its Unix socket and its own certificate, then
    serves gRPC over mutual TLS on that socket, with the health service.
 2. Describe, after every start: the plugin's name (the configuration
    entry's), the points it implements, the mlPolicy key it owns and the
    kind it builds. The host calls no other point.
 3. Configure, after every start: this plugin takes no args.
 4. Validate, on admission of a TrainJob or runtime: field errors, each
    naming its field; a failed call would reject the object.
 5. EnforceMLPolicy, on every reconcile of a job whose runtime sets
    mlPolicy.deepspeed: Info comes as JSON; the answer is the changes from
    that Info to the changed one, as Info changes (infochanges.py) to a host
    that sets accepts_info_changes (protocol 1.2), else as an RFC 6902 JSON
    Patch (jsonpatch.py); the host checks and applies them to the Info it
    sent. The plugin changes that very document, so keys it does not know
    stay as they were, and a key it removes is removed.
 6. Build, on every reconcile: the objects to apply, as JSON; the host sets
    their owner, namespace and managed-by labels.

Problems with the input are INVALID_ARGUMENT statuses whose message the user
sees; the plugin's own failures are INTERNAL; points it does not implement
answer UNIMPLEMENTED.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "gen")]

# First: it notes the host's pid and quiets gRPC's C core before grpc loads.
import goplugin  # noqa: E402, I001

import grpc  # noqa: E402

import deepspeed_policy as deepspeed  # noqa: E402
import infochanges  # noqa: E402
import jsonpatch  # noqa: E402
from trainforge.plugin.v1 import plugin_pb2 as pb  # noqa: E402
from trainforge.plugin.v1 import plugin_pb2_grpc as pb_grpc  # noqa: E402

log = logging.getLogger("deepspeed")

INFO_VERSION = "v1"
FIELD_ERROR_TYPES = {
    "INVALID": pb.FIELD_ERROR_TYPE_INVALID,
    "REQUIRED": pb.FIELD_ERROR_TYPE_REQUIRED,
    "FORBIDDEN": pb.FIELD_ERROR_TYPE_FORBIDDEN,
    "NOT_SUPPORTED": pb.FIELD_ERROR_TYPE_NOT_SUPPORTED,
}


def decode(what: str, data: bytes) -> Any:
    """Decodes a JSON document of the request, or raises InputError."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise deepspeed.InputError(f"{what}: not a JSON document: {e}") from None
    if not isinstance(doc, dict):
        raise deepspeed.InputError(f"{what}: not a JSON object")
    return doc


def decode_info(data: bytes) -> Any:
    info = decode("info", data)
    if info.get("version") != INFO_VERSION:
        raise deepspeed.InputError(f"info: version {info.get('version')!r}, this plugin knows {INFO_VERSION!r}")
    return info


def decode_job(what: str, data: bytes) -> Any:
    job = decode(what, data)
    if not (job.get("metadata") or {}).get("name"):
        raise deepspeed.InputError(f"{what}: the TrainJob has no metadata.name")
    return job


def answer(context: grpc.ServicerContext, point: str, fn: Callable[[], Any]) -> Any:
    """Runs one call: an InputError becomes INVALID_ARGUMENT with its
    message, anything else INTERNAL, logged with its traceback."""
    try:
        return fn()
    except deepspeed.InputError as e:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
    except Exception as e:  # a bug of the plugin, not of the input
        log.exception("call failed", extra={"fields": {"point": point}})
        context.abort(grpc.StatusCode.INTERNAL, f"{type(e).__name__}: {e}")


def validates_runtime(request: pb.ValidateRequest, job: Any) -> bool:
    """Whether request validates a runtime (its kind, protocol 1.3), or, from
    a host before 1.3 that sends no kind, the stand-in TrainJob's annotation."""
    if request.kind == pb.VALIDATION_KIND_UNSPECIFIED:
        return deepspeed.legacy_runtime_check(job)
    return request.kind == pb.VALIDATION_KIND_RUNTIME


def field_error(e: deepspeed.FieldError) -> pb.FieldError:
    out = pb.FieldError(type=FIELD_ERROR_TYPES[e.type], field=e.field, detail=e.detail)
    if e.bad_value is not deepspeed.NO_VALUE:
        out.bad_value = json.dumps(e.bad_value).encode()
    return out


def unimplemented(point: str) -> Callable[..., Any]:
    """A point the plugin does not list in Describe: UNIMPLEMENTED. (The
    generated base class answers that too, but logs a traceback first.)"""
    def method(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        context.abort(grpc.StatusCode.UNIMPLEMENTED, f"the {deepspeed.NAME} plugin does not implement {point}")
    return method


class DeepSpeedService(pb_grpc.PluginServiceServicer):
    """The PluginService."""

    EnforcePodGroupPolicy = unimplemented("EnforcePodGroupPolicy")
    Watch = unimplemented("Watch")
    Status = unimplemented("Status")

    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeResponse:
        return pb.DescribeResponse(
            name=deepspeed.NAME,
            version=deepspeed.VERSION,
            points=[pb.EXTENSION_POINT_VALIDATE, pb.EXTENSION_POINT_ENFORCE_ML_POLICY, pb.EXTENSION_POINT_BUILD],
            ml_policy_keys=[deepspeed.POLICY_KEY],
            builds=[pb.GroupVersionKind(group="", version="v1", kind="ConfigMap")],
        )

    def Configure(self, request: pb.ConfigureRequest, context: grpc.ServicerContext) -> pb.ConfigureResponse:
        args = request.args.strip()
        if args and args != b"null":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"the {deepspeed.NAME} plugin takes no args; remove args from its entry in the configuration file")
        return pb.ConfigureResponse()

    def Validate(self, request: pb.ValidateRequest, context: grpc.ServicerContext) -> pb.ValidateResponse:
        def run() -> pb.ValidateResponse:
            info = decode_info(request.info)
            job = decode_job("new_train_job", request.new_train_job)
            warnings, errs = deepspeed.validate(info, job, validates_runtime(request, job))
            return pb.ValidateResponse(warnings=warnings, field_errors=[field_error(e) for e in errs])
        return answer(context, "Validate", run)

    def EnforceMLPolicy(self, request: pb.EnforceMLPolicyRequest, context: grpc.ServicerContext) -> pb.EnforceMLPolicyResponse:
        def run() -> pb.EnforceMLPolicyResponse:
            before = decode_info(request.info)
            job = decode_job("train_job", request.train_job)
            after = json.loads(json.dumps(before))  # a deep copy, still plain JSON
            deepspeed.enforce(after, job)
            if request.accepts_info_changes:
                return pb.EnforceMLPolicyResponse(info_changes=infochanges.create(before, after))
            return pb.EnforceMLPolicyResponse(patch=jsonpatch.create(before, after))
        return answer(context, "EnforceMLPolicy", run)

    def Build(self, request: pb.BuildRequest, context: grpc.ServicerContext) -> pb.BuildResponse:
        def run() -> pb.BuildResponse:
            info = decode_info(request.info)
            job = decode_job("train_job", request.train_job)
            objs = [json.dumps(o, separators=(",", ":")).encode() for o in deepspeed.build(info, job)]
            if request.accepts_built:
                # A host since protocol 1.4: one message per object.
                return pb.BuildResponse(built=[pb.BuiltObject(object=o) for o in objs])
            return pb.BuildResponse(objects=objs)
        return answer(context, "Build", run)


def main() -> int:
    return goplugin.serve(deepspeed.NAME, lambda server: pb_grpc.add_PluginServiceServicer_to_server(DeepSpeedService(), server))


if __name__ == "__main__":
    sys.exit(main())
