import unittest

import jsonpatch


class DiffTest(unittest.TestCase):
    def roundtrip(self, before, after):
        ops = jsonpatch.diff(before, after)
        self.assertEqual(jsonpatch.apply(before, ops), after, ops)
        return ops

    def test_no_change_is_no_patch(self):
        doc = {"a": [1, {"b": None}], "c": "x"}
        self.assertEqual(jsonpatch.create(doc, {"a": [1, {"b": None}], "c": "x"}), b"")

    def test_changes_only_what_changed(self):
        before = {"version": "v1", "podSets": [{"name": "node", "count": 1, "unknown": {"kept": True}}]}
        after = {"version": "v1", "podSets": [{"name": "node", "count": 3, "unknown": {"kept": True}}]}
        self.assertEqual(self.roundtrip(before, after), [{"op": "replace", "path": "/podSets/0/count", "value": 3}])

    def test_adds_a_missing_list_whole(self):
        # Info leaves empty lists out: env must be created, not appended to.
        ops = self.roundtrip({"c": {"name": "node"}}, {"c": {"name": "node", "env": [{"name": "A"}]}})
        self.assertEqual(ops, [{"op": "add", "path": "/c/env", "value": [{"name": "A"}]}])

    def test_a_longer_list_is_replaced(self):
        ops = self.roundtrip({"env": [{"name": "A"}]}, {"env": [{"name": "A"}, {"name": "B"}]})
        self.assertEqual(ops, [{"op": "replace", "path": "/env", "value": [{"name": "A"}, {"name": "B"}]}])

    def test_removes_keys(self):
        self.assertEqual(self.roundtrip({"a": 1, "b": 2}, {"a": 1}), [{"op": "remove", "path": "/b"}])

    def test_escapes_pointer_tokens(self):
        key = "scheduling.k8s.io/group-name"
        ops = self.roundtrip({"podAnnotations": {}}, {"podAnnotations": {key: "llm", "a~b": "c"}})
        self.assertEqual(sorted(op["path"] for op in ops),
                         ["/podAnnotations/a~0b", "/podAnnotations/scheduling.k8s.io~1group-name"])

    def test_types_matter(self):
        # True == 1 and 1 == 1.0 in Python, not in JSON.
        self.assertEqual(self.roundtrip({"a": 1}, {"a": True}), [{"op": "replace", "path": "/a", "value": True}])
        self.assertEqual(self.roundtrip({"a": 1}, {"a": 1.0}), [{"op": "replace", "path": "/a", "value": 1.0}])
        self.assertEqual(jsonpatch.diff({"a": [1, True]}, {"a": [1, True]}), [])

    def test_create_is_compact_json(self):
        self.assertEqual(jsonpatch.create({"a": "é"}, {"a": "ü"}), '[{"op":"replace","path":"/a","value":"ü"}]'.encode())


if __name__ == "__main__":
    unittest.main()
