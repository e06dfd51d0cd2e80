"""A ``long_term_memory.json`` written by someone else: PaiCLI, an older or newer paicli, a script.

Every item is something this paicli does not fully understand; a rewrite must keep each one as
the same JSON value. ``DELETE_ID`` and ``VERIFY_ID`` are ordinary global facts a test deletes and
verifies, so the file goes through every kind of rewrite.
"""

from __future__ import annotations

import json
from typing import Any

DELETE_ID, VERIFY_ID = "fact-de1e7e00", "fact-5e1f1e55"

ITEMS: list[Any] = [
    {"id": "fact-0000e001", "content": "项目使用 Java 17", "type": "FACT",  # extra fields, tags as text
     "timestamp": "2026-09-23T08:00:00Z", "lastVerifiedAt": "2026-09-23T08:00:00Z",
     "metadata": {"source": "fact", "scope": "global"}, "tokenCount": 5,
     "tags": "build,java", "confidence": 0.9, "origin": {"tool": "paicli-java", "version": [1, 4]}},
    {"id": "note-1", "content": "a note from a newer version", "type": "NOTE",  # unknown type
     "timestamp": "2026-09-23T08:00:00Z", "metadata": {"scope": "global"}},
    {"content": "用户偏好简洁回答", "metadata": {"scope": "global"}},  # no id
    {"id": "fact-0000e004", "content": "服务端口是 8080",  # times as epoch millis, numbers as strings
     "timestamp": 1727078400000, "lastVerifiedAt": "1727078400000", "tokenCount": "7",
     "metadata": {"scope": "global", "priority": 2, "pinned": True, "owner": None}},
    {"id": "fact-0000e005", "content": "旧的摘要内容", "type": "summary",  # nulls, lower-case type
     "timestamp": None, "lastVerifiedAt": None, "metadata": None, "tokenCount": None, "tags": ["a"]},
    {"id": 42, "content": "数字 id 的条目", "timestamp": "2026-09-23T08:00:00.123456789+08:00"},
    "a bare string item", 17, None, ["nested", {"x": 1}],  # not objects at all
    {"id": "fact-0000e008", "content": None, "type": "FACT"},  # no text
    {"id": "fact-0000e009", "content": "时间写法不认识", "timestamp": "last tuesday",
     "last_verified_at": "2026-01-01T00:00:00Z", "metadata": {"scope": "global"}},
    {"id": DELETE_ID, "content": "要删除的条目 zebra crossing", "type": "FACT",
     "metadata": {"source": "fact", "scope": "global"}, "x-extra": 1},
    {"id": VERIFY_ID, "content": "要核实的条目 walrus colony", "type": "FACT",
     "timestamp": "2020-01-01T00:00:00Z", "lastVerifiedAt": "2020-01-01T00:00:00Z",
     "metadata": {"source": "auto_user_fact", "scope": "global", "verification_pending": "true", "kept": 3},
     "custom": {"k": [1, 2]}},
    {"id": "fact-0000e012", "content": "lone surrogate \ud800 survives", "metadata": {"scope": "global"}},
]
TOP_LEVEL = {"version": 3, "writer": {"name": "other-paicli"}}  # keys around a wrapped list


def file_text(wrapped: bool) -> str:
    """The file as another writer left it: PaiCLI's bare array, or an object holding it."""
    value = {**TOP_LEVEL, "entries": ITEMS, "trailer": True} if wrapped else ITEMS
    return json.dumps(value, indent=2)  # ASCII escapes, so the lone surrogate can be written


def items_of(text: str) -> tuple[list[Any], dict[str, Any] | None]:
    """The list and, for a wrapped file, the other top-level keys."""
    value = json.loads(text)
    if isinstance(value, list):
        return value, None
    return value["entries"], {k: v for k, v in value.items() if k != "entries"}


def unchanged() -> list[Any]:
    """The items a save, the delete and the verify must leave exactly as they were, in order."""
    return [i for i in ITEMS if not (isinstance(i, dict) and i.get("id") in (DELETE_ID, VERIFY_ID))]


def verified(item: dict[str, Any]) -> dict[str, Any]:
    """The verified item with only what a verify changes put back: everything else must match."""
    original = next(i for i in ITEMS if isinstance(i, dict) and i.get("id") == VERIFY_ID)
    meta = dict(item["metadata"])
    assert "verification_pending" not in meta and item["lastVerifiedAt"] != original["lastVerifiedAt"]
    return {**item, "lastVerifiedAt": original["lastVerifiedAt"],
            "metadata": {**meta, "verification_pending": "true"}}
