"""Info changes (protocol 1.2) between two JSON documents.

A host since protocol 1.2 sets accepts_info_changes and takes, instead of
a JSON Patch, the plugin's changes to Info in the format that plugin.proto
describes (EnforceMLPolicyResponse.info_changes): {"fields": {...}} for an
object's members, {"items": [...]} for a list's new elements, each taken
{"from": n} the list the host sent or {"set": value} anew, {"remove": true}
for a member removed, {"set": value} for a new value. The host applies
them to the Info it sent.

This plugin changes the very document the host sent (plain dicts and
lists, every key in them, those it does not know included), so element n
of a list is element n of the host's list: a list of the same length is
diffed element by element, and one whose length changed is set whole,
with the keys the plugin does not know in it.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from jsonpatch import same

JSON = Any


def diff(before: JSON, after: JSON) -> Optional[dict[str, JSON]]:
    """Returns the change from before to after, or None when they are the
    same."""
    if same(before, after):
        return None
    if isinstance(before, dict) and isinstance(after, dict):
        fields: dict[str, JSON] = {}
        for key in before:
            if key not in after:
                fields[key] = {"remove": True}
        for key, value in after.items():
            if key not in before:
                fields[key] = {"set": value}
                continue
            change = diff(before[key], value)
            if change is not None:
                fields[key] = change
        return {"fields": fields}
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        items = []
        for i, (b, a) in enumerate(zip(before, after)):
            change = diff(b, a)
            if change is None:
                items.append({"from": i})
            elif "set" in change:
                items.append(change)  # a new type: a new element
            else:
                items.append({"from": i, **change})
        return {"items": items}
    return {"set": after}


def create(before: JSON, after: JSON) -> bytes:
    """Returns the Info changes from before to after as JSON bytes, or b""
    for no change (the host takes empty changes as "no change")."""
    change = diff(before, after)
    if change is None:
        return b""
    return json.dumps(change, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def apply(doc: JSON, change: dict[str, JSON]) -> JSON:
    """Applies a change to a copy of doc, as the host does; for tests."""
    return _apply(json.loads(json.dumps(doc)), change)


def _apply(doc: JSON, change: dict[str, JSON]) -> JSON:
    if "set" in change:
        return change["set"]
    if "fields" in change:
        for key, sub in change["fields"].items():
            if sub.get("remove"):
                del doc[key]
            else:
                doc[key] = _apply(doc.get(key), sub)
        return doc
    out = []
    for item in change["items"]:
        if "from" in item:
            rest = {k: v for k, v in item.items() if k != "from"}
            out.append(_apply(doc[item["from"]], rest) if rest else doc[item["from"]])
        else:
            out.append(item["set"])
    return out
