"""What a command printed and what an edit changed, shown under the call (issue 26 "show,
don't paraphrase"): folded and bounded, so a long output or file costs a few lines on screen.
Plain functions on the call's arguments and its result text; the printer makes them inert
(``paicli.ui.terminal``)."""

from __future__ import annotations

import difflib
import re
from typing import Any

LAST_LINES = 5  # a command's output: the last lines shown
DIFF_LINES = 8  # an edit or a write: the diff lines shown
LINE_CHARS = 160
_EXIT = re.compile(r"^命令执行完成 \(exit code: (-?\d+)\)$")  # tools/builtin/shell.py's first line


def _cut(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


def command_preview(result: str, artifact: Any = None) -> list[str]:
    """``execute_command``'s result: the exit code, then the last lines of what it printed. With
    the tool's record of its output (``artifact["output"]``, issue 41) the count is the command's
    own and the line says where the whole output was saved, even when the model saw a preview."""
    first, _, output = result.partition("\n")
    match = _EXIT.match(first.strip())
    if match is None:
        return []
    printed = artifact.get("output") if isinstance(artifact, dict) else None
    if isinstance(printed, dict):
        count, last = int(printed.get("lines") or 0), list(printed.get("tail") or [])[-LAST_LINES:]
    else:
        lines = output.rstrip("\n").splitlines()
        count, last = len(lines), lines[-LAST_LINES:]
    left = f"，前 {count - len(last)} 行未显示" if count > len(last) else ""
    saved = _saved(printed) if isinstance(printed, dict) else ""
    return [f"    ⎿ exit code {match.group(1)} · 输出 {count} 行{left}{saved}", *(f"    │ {_cut(line)}" for line in last)]


def _saved(printed: dict[str, Any]) -> str:
    if not printed.get("file"):
        return f"（超过 {printed['kept']} 字符的部分未保存）" if printed.get("kept") else ""
    if printed.get("kept"):
        return f"（前 {printed['kept']} 字符已保存到 {printed['file']}，其余未保存）"
    return f"（完整输出已保存到 {printed['file']}）"


def change_lines(record: dict[str, Any], limit: int, indent: str = "    ") -> list[str]:
    """A change (``paicli.tools.diffs``): its summary line, then at most ``limit`` diff lines and the
    count of those left out."""
    from paicli.tools.diffs import shown, summary

    body, left = shown(record, limit)
    lines = [f"{indent}⎿ {summary(record)}", *(f"{indent}│ {_cut(line)}" for line in body)]
    return lines + ([f"{indent}│ …（其余 {left} 行未显示）"] if left else [])


def edit_preview(preview: str | None, args: Any, artifact: Any = None) -> list[str]:
    """An edit's or a write's change against what was there (issue 41: the tool's own record,
    ``artifact["change"]``); without one, by the tool's ``preview`` fact, an "edit"'s replacement
    (``edit_file``: old_text → new_text) or a "write"'s content."""
    if isinstance(artifact, dict) and isinstance(artifact.get("change"), dict):
        return change_lines(artifact["change"], DIFF_LINES)
    if not isinstance(args, dict):
        return []
    if preview == "edit":
        old, new = str(args.get("old_text") or ""), str(args.get("new_text") or "")
        body = [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
                if not line.startswith(("---", "+++", "@@"))]
    elif preview == "write":
        body = ["+" + line for line in str(args.get("content") or "").splitlines()]
    else:
        return []
    shown = [f"    │ {_cut(line)}" for line in body[:DIFF_LINES]]
    left = [f"    │ …（其余 {len(body) - DIFF_LINES} 行未显示）"] if len(body) > DIFF_LINES else []
    return [*shown, *left]
