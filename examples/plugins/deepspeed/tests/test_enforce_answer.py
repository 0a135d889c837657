"""The EnforceMLPolicy answer of the plugin, as hosts of each protocol
apply it to the Info they sent: the version-skew promise of plugin.proto."""

import json
import unittest

import infochanges
import jsonpatch
import plugin
from trainforge.plugin.v1 import plugin_pb2 as pb


class Aborted(Exception):
    pass


class Context:
    """The part of grpc.ServicerContext that the plugin uses."""

    def abort(self, code, details):
        raise Aborted(f"{code}: {details}")


def sent_info():
    """An Info as a host newer than the plugin sends it: keys the plugin
    does not know at every depth, in list elements too, and a runtime env
    var that the TrainJob overrides."""
    return {
        "version": "v1",
        "futureTopLevel": {"a": "b"},
        "runtimePolicy": {"mlPolicy": {"numNodes": 2, "deepspeed": {}}},
        "podSets": [{
            "name": "node", "ancestorStep": "trainer", "replicas": 1, "count": 1,
            "futurePodSetField": ["kept"],
            "containers": [{
                "name": "node", "image": "deepspeed",
                "futureContainerField": True,
                "env": [
                    {"name": "TOKEN", "futureEnvField": {"secret": "hf"}},
                    {"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "hp", "key": "lr"}}},
                ],
            }],
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "futureSizeField": "1Gi"}}],
            "endpoints": ["llm-node-0-0.llm"],
        }],
    }


JOB = {"metadata": {"name": "llm", "namespace": "team-a"},
       "spec": {"runtimeRef": {"name": "deepspeed"}, "trainer": {"numNodes": 3, "env": [{"name": "LR", "value": "0.01"}]}}}


def enforce(accepts_info_changes):
    """Runs EnforceMLPolicy on sent_info() and applies the answer to it the
    way a host of that protocol does; returns the host's Info."""
    sent = sent_info()
    req = pb.EnforceMLPolicyRequest(info=json.dumps(sent).encode(), train_job=json.dumps(JOB).encode(),
                                    accepts_info_changes=accepts_info_changes)
    resp = plugin.DeepSpeedService().EnforceMLPolicy(req, Context())
    if accepts_info_changes:
        assert not resp.patch and not resp.info, "a 1.2 host gets info_changes only"
        return infochanges.apply(sent, json.loads(resp.info_changes))
    assert not resp.info_changes and not resp.info, "an older host gets a patch only"
    return jsonpatch.apply(sent, json.loads(resp.patch))


HOSTS = {"1.2 (info_changes)": True, "1.0 and 1.1 (patch)": False}


class EnforceAnswerTest(unittest.TestCase):
    def test_enforce_keeps_unknown_keys(self):
        for host, accepts in HOSTS.items():
            with self.subTest(host=host):
                got = enforce(accepts)
                ps = got["podSets"][0]
                c = ps["containers"][0]
                self.assertEqual(got["futureTopLevel"], {"a": "b"})
                self.assertEqual(ps["futurePodSetField"], ["kept"])
                self.assertIs(c["futureContainerField"], True)
                self.assertEqual(c["env"][0], {"name": "TOKEN", "futureEnvField": {"secret": "hf"}})
                self.assertEqual(ps["volumes"][0], {"name": "shm", "emptyDir": {"medium": "Memory", "futureSizeField": "1Gi"}})
                # And the plugin's own changes are there.
                self.assertEqual(ps["count"], 3)
                self.assertIn({"name": "DS_HOSTFILE", "value": "/job/hostfile"}, c["env"])

    def test_enforce_removes_known_keys(self):
        # The TrainJob's LR replaces the runtime's: valueFrom, a key the
        # plugin knows, goes.
        for host, accepts in HOSTS.items():
            with self.subTest(host=host):
                env = enforce(accepts)["podSets"][0]["containers"][0]["env"]
                self.assertEqual([e for e in env if e["name"] == "LR"], [{"name": "LR", "value": "0.01"}])

    def test_no_change_is_no_answer(self):
        before = sent_info()
        self.assertEqual(infochanges.create(before, sent_info()), b"")

    def test_changes_name_list_elements_by_position(self):
        before = {"l": [{"name": "a", "x": 1}, {"name": "b"}], "m": [1]}
        after = {"l": [{"name": "a", "x": 2}, {"name": "b"}], "m": [1, 2]}
        self.assertEqual(infochanges.diff(before, after), {"fields": {
            "l": {"items": [{"from": 0, "fields": {"x": {"set": 2}}}, {"from": 1}]},
            "m": {"set": [1, 2]},
        }})
        self.assertEqual(infochanges.apply(before, infochanges.diff(before, after)), after)




class BuildAnswerTest(unittest.TestCase):
    """A host since protocol 1.4 gets built, an older one objects."""

    def build(self, accepts_built):
        req = pb.BuildRequest(info=json.dumps(sent_info()).encode(), train_job=json.dumps(JOB).encode(),
                              accepts_built=accepts_built)
        return plugin.DeepSpeedService().Build(req, Context())

    def test_answer_per_host(self):
        new, old = self.build(True), self.build(False)
        self.assertEqual((len(new.built), len(new.objects)), (1, 0))
        self.assertEqual((len(old.built), len(old.objects)), (0, 1))
        self.assertEqual(new.built[0].object, old.objects[0])
        self.assertFalse(new.built[0].create_once)
        self.assertEqual(json.loads(old.objects[0])["kind"], "ConfigMap")

class ValidatesRuntimeTest(unittest.TestCase):
    """A runtime check is told by the request's kind (protocol 1.3); the
    annotation counts only from a host that sends no kind."""

    def test_kind(self):
        annotated = {"metadata": {"annotations": {"trainforge.dev/runtime-check": "true"}}}
        plain = {"metadata": {}}
        for name, kind, job, want in [
            ("a runtime", pb.VALIDATION_KIND_RUNTIME, plain, True),
            ("a TrainJob", pb.VALIDATION_KIND_TRAIN_JOB, plain, False),
            ("a TrainJob that carries the annotation", pb.VALIDATION_KIND_TRAIN_JOB, annotated, False),
            ("a host before 1.3, a runtime", pb.VALIDATION_KIND_UNSPECIFIED, annotated, True),
            ("a host before 1.3, a TrainJob", pb.VALIDATION_KIND_UNSPECIFIED, plain, False),
        ]:
            with self.subTest(name):
                self.assertEqual(plugin.validates_runtime(pb.ValidateRequest(kind=kind), job), want)

if __name__ == "__main__":
    unittest.main()
