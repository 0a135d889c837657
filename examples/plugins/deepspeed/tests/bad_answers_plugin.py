#!/usr/bin/python3
"""The DeepSpeed plugin, answering with the bad answers of the host's table.

framework/remote/remotetest/bad-answers.json holds faults (a field in the
wrong case, a key given twice, an unknown field, too deep, too big, a wrong
type, JSON that is not JSON, two documents), each written in every format a
plugin answers with JSON. This program is plugin.py's service, started the
same way (go-plugin's handshake, mutual TLS), whose every answer is the one
the TrainJob's annotation test.trainforge.dev/bad-answer names ("3/patch":
row 3's patch): so the Go test TestBadAnswersFromPython
(examples/plugins/deepspeed) shows that a Python plugin's answers reach the
same checks, with the same messages, as the Go table test's.

The table's path is in BAD_ANSWERS (the test sets it).
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]

import plugin  # noqa: E402  (puts gen/ on the path and loads goplugin first)

import goplugin  # noqa: E402
from trainforge.plugin.v1 import plugin_pb2 as pb  # noqa: E402
from trainforge.plugin.v1 import plugin_pb2_grpc as pb_grpc  # noqa: E402

ANNOTATION = "test.trainforge.dev/bad-answer"


def load_table(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class BadAnswers(plugin.DeepSpeedService):
    """plugin.py's service, whose answers are the table's."""

    def __init__(self, table: dict) -> None:
        self.table = table

    def answer_for(self, job_json: bytes, formats: tuple[str, ...]) -> tuple[str, bytes]:
        job = json.loads(job_json)
        row, fmt = job["metadata"]["annotations"][ANNOTATION].split("/")
        if fmt not in formats:
            raise ValueError(f"{fmt} is not an answer of this point ({', '.join(formats)})")
        a = self.table["rows"][int(row)]["answers"][fmt]
        doc = a["answer"].replace("PAD", "x" * a.get("pad", 0), 1)
        return fmt, doc.encode("utf-8")

    def Describe(self, request, context):
        resp = super().Describe(request, context)
        resp.points.append(pb.EXTENSION_POINT_STATUS)
        return resp

    def Validate(self, request, context):
        _, doc = self.answer_for(request.new_train_job, ("bad_value",))
        return pb.ValidateResponse(field_errors=[pb.FieldError(
            type=pb.FIELD_ERROR_TYPE_INVALID, field="spec.trainer", bad_value=doc, detail="bad")])

    def EnforceMLPolicy(self, request, context):
        fmt, doc = self.answer_for(request.train_job, ("info", "patch", "info_changes"))
        return pb.EnforceMLPolicyResponse(**{fmt: doc})

    def Build(self, request, context):
        _, doc = self.answer_for(request.train_job, ("object",))
        return pb.BuildResponse(objects=[doc])

    def Status(self, request, context):
        _, doc = self.answer_for(request.train_job, ("status",))
        return pb.StatusResponse(status=doc)


def main() -> int:
    table = load_table(os.environ["BAD_ANSWERS"])
    return goplugin.serve(plugin.deepspeed.NAME,
                          lambda server: pb_grpc.add_PluginServiceServicer_to_server(BadAnswers(table), server))


if __name__ == "__main__":
    sys.exit(main())
