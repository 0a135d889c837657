import copy
import unittest

import deepspeed_policy as ds

RANK = {"name": "NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": ds.COMPLETION_INDEX}}}


def info(policy=None, gpus=None, env=None):
    """An Info document as the host sends it: a model initializer and a
    trainer step of one pod."""
    container = {"name": "node", "image": "deepspeed"}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if env:
        container["env"] = env
    return {
        "version": "v1",
        "runtimePolicy": {"mlPolicy": {"numNodes": 2, "deepspeed": {} if policy is None else policy}},
        "podSets": [
            {"name": "model-initializer", "ancestorStep": "model-initializer", "replicas": 1, "count": 1,
             "containers": [{"name": "model-initializer"}]},
            {"name": "node", "ancestorStep": "trainer", "replicas": 1, "count": 1, "containers": [container],
             "endpoints": ["llm-node-0-0.llm"]},
        ],
        "futureField": {"kept": True},
    }


def job(trainer=None, name="llm"):
    spec = {"runtimeRef": {"name": "deepspeed"}}
    if trainer is not None:
        spec["trainer"] = trainer
    return {"metadata": {"name": name, "namespace": "team-a"}, "spec": spec}


def runtime_check():
    """The stand-in TrainJob of a runtime being validated."""
    return {"metadata": {"name": "deepspeed"}, "spec": {"runtimeRef": {"name": "deepspeed"}}}


def trainer_container(doc):
    return doc["podSets"][1]["containers"][0]


class EnforceTest(unittest.TestCase):
    def test_sets_the_launcher_environment(self):
        doc = info({"masterPort": 23456, "nccl": {"socketIfname": "eth0", "debug": "INFO", "ibDisable": True}},
                   env=[{"name": "PYTHONUNBUFFERED", "value": "1"}, {"name": "LR", "value": "0.1"}])
        ds.enforce(doc, job({"numNodes": 3, "env": [{"name": "LR", "value": "0.01"}, {"name": "EPOCHS", "value": "3"}]}))
        c = trainer_container(doc)
        self.assertEqual(doc["podSets"][1]["count"], 3)
        self.assertEqual(c["env"], [
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "LR", "value": "0.01"},  # the TrainJob's value, in the runtime's place
            {"name": "EPOCHS", "value": "3"},
            {"name": "DS_HOSTFILE", "value": "/job/hostfile"},
            RANK,
            {"name": "MASTER_ADDR", "value": "llm-node-0-0.llm"},
            {"name": "MASTER_PORT", "value": "23456"},
            # In the order of the settings, not of the runtime's keys.
            {"name": "NCCL_DEBUG", "value": "INFO"},
            {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
            {"name": "NCCL_IB_DISABLE", "value": "1"},
        ])
        self.assertEqual(c["ports"], [{"containerPort": 23456, "protocol": "TCP"}])
        self.assertEqual(c["volumeMounts"], [{"name": "deepspeed-hostfile", "mountPath": "/job/hostfile",
                                              "subPath": "hostfile", "readOnly": True}])
        self.assertEqual(doc["podSets"][1]["volumes"], [{"name": "deepspeed-hostfile", "configMap": {"name": "llm-deepspeed-hostfile"}}])
        self.assertEqual(doc["podSets"][0]["containers"], [{"name": "model-initializer"}], "initializers are left alone")
        self.assertEqual(doc["futureField"], {"kept": True})

    def test_node_count_defaults(self):
        doc = info()
        ds.enforce(doc, job())
        self.assertEqual(doc["podSets"][1]["count"], 2, "the runtime's numNodes")
        del doc["runtimePolicy"]["mlPolicy"]["numNodes"]
        ds.enforce(doc, job())
        self.assertEqual(doc["podSets"][1]["count"], 1)

    def test_is_idempotent(self):
        doc = info({"nccl": {"p2pDisable": False}})
        ds.enforce(doc, job({"env": [{"name": "A", "value": "1"}]}))
        once = copy.deepcopy(doc)
        ds.enforce(doc, job({"env": [{"name": "A", "value": "1"}]}))
        self.assertEqual(doc, once)
        self.assertIn({"name": "NCCL_P2P_DISABLE", "value": "0"}, trainer_container(doc)["env"])

    def test_refuses_a_bad_policy(self):
        with self.assertRaisesRegex(ds.InputError, r"spec.mlPolicy.deepspeed.masterPort: 0 must be a port number"):
            ds.enforce(info({"masterPort": 0}), job())

    def test_refuses_a_runtime_without_trainer(self):
        doc = info()
        doc["podSets"][1]["ancestorStep"] = ""
        with self.assertRaisesRegex(ds.InputError, "the runtime has no trainer step"):
            ds.enforce(doc, job())


class BuildTest(unittest.TestCase):
    def hostfile(self, doc, trainjob):
        objs = ds.build(doc, trainjob)
        self.assertEqual(len(objs), 1)
        return objs[0]["data"]["hostfile"]

    def test_lists_every_trainer_pod_with_its_slots(self):
        doc = info(gpus=4)
        doc["labels"] = {"team": "nlp"}
        doc["podSets"][1]["endpoints"] = ["llm-node-0-0.llm", "llm-node-0-1.llm"]
        objs = ds.build(doc, job())
        self.assertEqual(objs, [{
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "llm-deepspeed-hostfile", "namespace": "team-a", "labels": {"team": "nlp"}},
            "data": {"hostfile": "llm-node-0-0.llm slots=4\nllm-node-0-1.llm slots=4\n"},
        }])

    def test_slots(self):
        for name, doc, trainjob, want in [
            ("one without GPUs", info(), job(), 1),
            ("the GPUs of a node", info(gpus=8), job(), 8),
            ("the policy's over the GPUs", info({"numProcPerNode": 2}, gpus=8), job(), 2),
            ("the TrainJob's over the policy's", info({"numProcPerNode": 2}), job({"numProcPerNode": 3}), 3),
            ("a number as a string", info(), job({"numProcPerNode": "5"}), 5),
            ("gpu is the GPU count", info({"numProcPerNode": 2}, gpus=4), job({"numProcPerNode": "gpu"}), 4),
            ("auto without GPUs", info(), job({"numProcPerNode": "auto"}), 1),
        ]:
            with self.subTest(name):
                self.assertEqual(self.hostfile(doc, trainjob), f"llm-node-0-0.llm slots={want}\n")

    def test_refuses_cpu(self):
        with self.assertRaisesRegex(ds.InputError, "spec.trainer.numProcPerNode: DeepSpeed runs one process per accelerator"):
            ds.build(info(), job({"numProcPerNode": "cpu"}))


class ValidateTest(unittest.TestCase):
    def errors(self, doc, trainjob, runtime=False):
        warnings, errs = ds.validate(doc, trainjob, runtime)
        self.assertEqual(warnings, [])
        return [(e.type, e.field, str(e)) for e in errs]

    def test_a_valid_job(self):
        self.assertEqual(self.errors(info({"numProcPerNode": 4, "masterPort": 29501, "nccl": {"debug": "WARN"}}),
                                     job({"numProcPerNode": "auto", "env": [{"name": "NCCL_DEBUG_SUBSYS", "value": "ALL"}]})), [])

    def test_policy_problems_on_the_runtime(self):
        got = self.errors(info({"numProcPerNode": 0, "masterPort": "29500", "zero": 3,
                                "nccl": {"debug": "LOUD", "ibDisable": "yes", "ring": 1}}), runtime_check(), runtime=True)
        self.assertEqual([(t, f) for t, f, _ in got], [
            ("INVALID", "spec.mlPolicy.deepspeed.zero"),
            ("INVALID", "spec.mlPolicy.deepspeed.numProcPerNode"),
            ("INVALID", "spec.mlPolicy.deepspeed.masterPort"),
            ("INVALID", "spec.mlPolicy.deepspeed.nccl.ring"),
            ("NOT_SUPPORTED", "spec.mlPolicy.deepspeed.nccl.debug"),
            ("INVALID", "spec.mlPolicy.deepspeed.nccl.ibDisable"),
        ])
        self.assertEqual(got[0][2], "spec.mlPolicy.deepspeed.zero: unknown field; deepspeed takes numProcPerNode, masterPort, nccl")
        self.assertEqual(got[4][2], 'spec.mlPolicy.deepspeed.nccl.debug: "LOUD" supported values: VERSION, WARN, INFO, ABORT, TRACE')

    def test_policy_problems_on_a_trainjob_name_the_runtime_field(self):
        self.assertEqual(self.errors(info({"masterPort": 70000}), job()), [(
            "INVALID", "spec.runtimeRef",
            'spec.runtimeRef: "deepspeed" the runtime\'s spec.mlPolicy.deepspeed.masterPort: 70000 must be a port number, 1 to 65535')])

    def test_a_runtime_without_trainer(self):
        doc = info()
        doc["podSets"] = doc["podSets"][:1]
        got = self.errors(doc, runtime_check(), runtime=True)
        self.assertEqual([(t, f) for t, f, _ in got], [("REQUIRED", "spec.template.spec.replicatedJobs")])
        got = self.errors(doc, job())
        self.assertEqual(got, [("INVALID", "spec.runtimeRef", 'spec.runtimeRef: "deepspeed" the runtime has no trainer step: label a '
                                'replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")')])

    def test_trainjob_problems(self):
        got = self.errors(info({"nccl": {"debug": "INFO"}}), job({"numProcPerNode": "cpu", "env": [
            {"name": "OK", "value": "1"}, {"name": "MASTER_ADDR", "value": "x"}, {"name": "NCCL_DEBUG", "value": "TRACE"}]}))
        self.assertEqual([(t, f) for t, f, _ in got], [
            ("NOT_SUPPORTED", "spec.trainer.numProcPerNode"),
            ("FORBIDDEN", "spec.trainer.env[1].name"),
            ("FORBIDDEN", "spec.trainer.env[2].name"),
        ])
        self.assertEqual(got[2][2], "spec.trainer.env[2].name: NCCL_DEBUG is set by the DeepSpeed plugin, which sets "
                                    "DS_HOSTFILE, NODE_RANK, MASTER_ADDR, MASTER_PORT, NCCL_DEBUG itself; remove it from spec.trainer.env")

    def test_runtime_check_skips_the_trainjob(self):
        self.assertEqual(self.errors(info(), runtime_check(), runtime=True), [])


if __name__ == "__main__":
    unittest.main()
