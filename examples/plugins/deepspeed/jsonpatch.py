"""RFC 6902 JSON Patches between two JSON documents.

An Enforce answer is a patch against the Info the host sent. The plugin
decodes that Info, changes its copy, and sends the difference: fields it did
not touch, those it does not know included, are not in the patch, so the
host keeps them as they were.

The patch is small but not always the smallest: a list whose length changed
is replaced whole, since the host checks that a patch applies, not that it
is minimal.
"""

from __future__ import annotations

import json
from typing import Any

JSON = Any


def pointer(tokens: list[str | int]) -> str:
    """Returns the RFC 6901 JSON Pointer of a path ("~" and "/" escaped)."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def same(a: JSON, b: JSON) -> bool:
    """Reports whether two decoded JSON values are equal as JSON.

    Python's == is not enough: True == 1 and 1 == 1.0, which are different
    JSON values (a boolean, an integer, a number the host may decode into an
    integer field and refuse).
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def diff(before: JSON, after: JSON) -> list[dict[str, JSON]]:
    """Returns the operations that turn before into after."""
    ops: list[dict[str, JSON]] = []
    _diff(before, after, [], ops)
    return ops


def _diff(before: JSON, after: JSON, path: list[str | int], ops: list[dict[str, JSON]]) -> None:
    if same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": pointer(path + [key])})
        for key, value in after.items():
            if key in before:
                _diff(before[key], value, path + [key], ops)
            else:
                ops.append({"op": "add", "path": pointer(path + [key]), "value": value})
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after)):
            _diff(b, a, path + [i], ops)
        return
    # "replace" of the root would replace the whole document; the host
    # refuses a patch outside Info's fields, so the root never changes type.
    ops.append({"op": "replace", "path": pointer(path), "value": after})


def create(before: JSON, after: JSON) -> bytes:
    """Returns the patch from before to after as JSON bytes, or b"" for no
    change (the host takes an empty patch as "no change")."""
    ops = diff(before, after)
    if not ops:
        return b""
    return json.dumps(ops, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def apply(doc: JSON, ops: list[dict[str, JSON]]) -> JSON:
    """Applies operations made by diff to a copy of doc; for tests."""
    doc = json.loads(json.dumps(doc))
    for op in ops:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        parent = doc
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last: str | int = tokens[-1]
        if isinstance(parent, list):
            last = int(last)
        if op["op"] == "remove":
            del parent[last]
        elif op["op"] == "add" and isinstance(parent, list):
            parent.insert(int(last), op["value"])
        elif op["op"] in ("add", "replace"):
            if op["op"] == "replace" and isinstance(parent, dict) and last not in parent:
                raise KeyError(f"replace of a missing member {op['path']}")
            parent[last] = op["value"]
        else:
            raise ValueError(f"operation {op['op']} is not one diff makes")
    return doc
