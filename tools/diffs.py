"""What a write or an edit changes in a file, as data (issue 41, item 2): a bounded unified diff
against what was there, the lines added and removed, and each side's size and hash.

The same record answers three readers: the approval question for the call (what will be lost),
the preview under the call once it ran (the REPL, ``-p --verbose``) and the audit log (``/audit``).
It rides in the tool result's artifact and in the approval request, never in what the model reads.
"""

from __future__ import annotations

import difflib
import hashlib
from typing import Any

from paicli.tools.common import split_lines

MAX_DIFF_LINES = 40  # kept in the record; each reader shows fewer
MAX_DIFFED_LINES = 20_000  # beyond this on either side no line diff is made (difflib is quadratic)
CONTEXT_LINES = 1


def digest(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:12]}


def change(before: str | None, after: str, before_data: bytes | None, after_data: bytes, *,
           existed: bool = True) -> dict[str, Any]:
    """``before`` None: the file is new (``existed`` False), or was not text the diff could read
    (binary, over the write cap). ``diff`` holds at most MAX_DIFF_LINES lines (hunk headers
    ``@@ -a,b +c,d @@`` included) and ``left_out`` counts the rest."""
    old, new = split_lines(before or ""), split_lines(after)
    record: dict[str, Any] = {"new_file": not existed, "after": digest(after_data),
                              "before": digest(before_data) if before_data is not None else None}
    if existed and before is None:
        return {**record, "diff": [], "left_out": 0, "added": None, "removed": None, "unread": True}
    if max(len(old), len(new)) > MAX_DIFFED_LINES:
        return {**record, "diff": [], "left_out": 0, "added": None, "removed": None}
    body = list(difflib.unified_diff(old, new, lineterm="", n=CONTEXT_LINES))[2:]  # no ---/+++ lines
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    return {**record, "diff": body[:MAX_DIFF_LINES], "left_out": max(0, len(body) - MAX_DIFF_LINES),
            "added": added, "removed": removed}


def summary(record: dict[str, Any]) -> str:
    """One line: ``+3 -1 行，120 → 130 字节，sha256 ab12… → cd34…`` (a new file: ``新文件，…``)."""
    after, before = record["after"], record.get("before")
    lines = "" if record.get("added") is None else f"+{record['added']} -{record['removed']} 行，"
    if record.get("new_file"):
        return f"新文件，{lines}{after['bytes']} 字节，sha256 {after['sha256']}"
    if before is None:
        return f"覆盖原有文件（二进制或超过 5MB，未比较），写入 {after['bytes']} 字节，sha256 {after['sha256']}"
    return (f"{lines}{before['bytes']} → {after['bytes']} 字节，"
            f"sha256 {before['sha256']} → {after['sha256']}")


def shown(record: dict[str, Any], limit: int) -> tuple[list[str], int]:
    """The first ``limit`` diff lines, and how many were left out (in the record or here)."""
    lines = list(record.get("diff") or [])
    return lines[:limit], max(0, len(lines) - limit) + int(record.get("left_out") or 0)
