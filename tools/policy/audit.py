"""The audit log of risky tool calls and the ``/audit`` listing (reference v.7).

One JSON line per call in ``<dir>/audit-YYYY-MM-DD.jsonl``; the caller resolves ``dir``
(``PAICLI_AUDIT_DIR`` or ``$PAICLI_HOME/audit``, read by settings). Line fields:
``timestamp, tool, args, outcome (allow|deny|error|cancelled), reason, approver, durationMs`` and an
optional ``metadata`` object. ``args`` are the arguments that ran; when the user edited them, the
model's proposal is ``metadata.proposedArgs`` (issue 26). A write's or an edit's change is
``metadata.change`` (lines added and removed, sizes, hashes: ``paicli.tools.diffs.summary``; issue 41),
and a call an earlier "approve all" answered has ``approver`` ``approve_all``. ``cancelled``: Ctrl-C while the call
was put to the user, or while it ran. Every text field is sanitised, then cut to 1 000 characters.

Audited tools (``is_audited``, the ``audited`` fact of each tool's spec): those that change
files or memory or reach outside the project, i.e. ``write_file, edit_file, execute_command, save_memory, web_fetch,
save_skill_reference, revert_turn`` and every
``mcp__*`` tool. Reads (``read_file``, ``grep_code``, ...) and ``web_search`` are not.

The log is best effort: a failed write prints ``⚠️ 审计日志写入失败: …`` to stderr and
returns that text; it never raises into the tool loop.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from paicli.tools.facts import ToolFacts

MAX_FIELD_CHARS = 1000  # reference v.7
TRUNCATED = "...(truncated)"  # reference v.7
DEFAULT_RECENT, MAX_RECENT = 10, 100  # reference v.7: /audit [N], N clamped to 1..100
TARGET_KEYS = ("command", "path", "url", "fact")  # what /audit shows of each call's arguments
TARGET_CHARS = 160
SANDBOX_SHOWN = {"sandboxed": "沙箱内（无网络）", "network": "沙箱内（联网）", "outside": "沙箱外"}

_SECRET_NAME = r"[A-Za-z0-9_\-]*(?:token|key|password|secret|authorization)[A-Za-z0-9_\-]*"
# reference v.7: the three sanitising rules.
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"'\\,;]+")
_JSON_SECRET = re.compile(r'(?i)("' + _SECRET_NAME + r'"\s*:\s*)"(?:[^"\\]|\\.)*"')
_ASSIGNED_SECRET = re.compile(r"(?i)\b(" + _SECRET_NAME + r"=)[^\s&\"'\\,;]+")


def is_audited(facts: ToolFacts) -> bool:
    return facts.audited


def sanitize(text: str) -> str:
    text = _JSON_SECRET.sub(r'\1"***"', text)
    text = _BEARER.sub(r"\1***", text)
    return _ASSIGNED_SECRET.sub(r"\1***", text)


def clean(text: Any) -> str:
    """Sanitise, then cut to 1 000 characters plus ``...(truncated)``."""
    value = sanitize(text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str))
    return value if len(value) <= MAX_FIELD_CHARS else value[:MAX_FIELD_CHARS] + TRUNCATED


class AuditLog:
    def __init__(self, directory: Path | str, now: Callable[[], datetime] | None = None,
                 stderr: TextIO | None = None):
        self.directory = Path(directory)
        self._now = now or (lambda: datetime.now().astimezone())
        self._stderr = stderr
        self._lock = threading.Lock()

    def path(self, day: datetime | None = None) -> Path:
        return self.directory / f"audit-{(day or self._now()):%Y-%m-%d}.jsonl"

    def write(self, tool: str, args: Any, outcome: str, reason: str = "", approver: str = "none",
               duration_ms: int = 0, metadata: dict[str, Any] | None = None) -> str | None:
        """Append one entry; returns None, or the warning text when the write failed."""
        now = self._now()
        entry = _entry(now, tool, args, outcome, reason, approver, duration_ms, metadata)
        try:
            with self._lock:
                self._append(self.path(now), json.dumps(entry, ensure_ascii=False) + "\n")
        except (OSError, ValueError) as exc:
            warning = f"⚠️ 审计日志写入失败: {exc}"
            print(warning, file=self._stderr or sys.stderr)
            return warning
        return None

    def _append(self, path: Path, line: str) -> None:
        """Owner-only, like the ledger: the log holds commands, paths and fetched URLs."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # an existing one is the user's choice
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            try:
                os.fchmod(fd, 0o600)  # a file made by an older version keeps no wider mode
            except OSError:
                pass
            out.write(line)

    def recent(self, n: int = DEFAULT_RECENT) -> list[dict[str, Any]]:
        """Today's last ``n`` entries, oldest first; unreadable lines are skipped."""
        try:
            lines = self.path().read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        entries = [entry for entry in map(_parse, lines) if entry is not None]
        return entries[-n:] if n > 0 else []


def _entry(now: datetime, tool: str, args: Any, outcome: str, reason: str, approver: str,
           duration_ms: int, metadata: dict[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "timestamp": now.isoformat(timespec="seconds"),
        "tool": clean(tool),
        "args": clean(args if args is not None else {}),
        "outcome": clean(outcome),
        "reason": clean(reason or ""),
        "approver": clean(approver or "none"),
        "durationMs": int(duration_ms),
    }
    if metadata:
        entry["metadata"] = {str(key): clean(value) for key, value in metadata.items()}
    return entry


def _parse(line: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def recent_count(raw: str | None) -> int:
    """``/audit [N]``: N defaults to 10 and is clamped to 1..100; junk means the default."""
    try:
        value = int((raw or "").strip()) if (raw or "").strip() else DEFAULT_RECENT
    except ValueError:
        value = DEFAULT_RECENT
    return max(1, min(MAX_RECENT, value))


def format_recent(entries: list[dict[str, Any]], n: int = DEFAULT_RECENT) -> str:
    """The ``/audit`` output (v.7) for the last ``n`` of ``entries``."""
    shown = entries[-n:] if n > 0 else []
    if not shown:
        return "📭 今日尚无审计记录"
    lines = [f"📋 最近 {len(shown)} 条危险工具审计："]
    for entry in shown:
        lines.extend(_entry_lines(entry))
    return "\n".join(lines)


def _entry_lines(entry: dict[str, Any]) -> list[str]:
    outcome = str(entry.get("outcome", "")).upper()
    lines = [f"   [{outcome}] {entry.get('timestamp', '')} {entry.get('tool', '')} "
             f"({entry.get('durationMs', 0)}ms, approver={entry.get('approver', 'none')})"]
    target = _target(entry.get("args"))
    if target:
        lines.append(f"        {target}")
    if entry.get("reason"):
        lines.append(f"        原因: {entry['reason']}")
    metadata = entry.get("metadata")
    if isinstance(metadata, dict) and metadata.get("proposedArgs"):
        edited = _edited(entry.get("args"), metadata["proposedArgs"])
        lines.append(f"        模型原参数（已由用户修改{' ' + edited if edited else ''}）: {_target(metadata['proposedArgs'])}")
    if isinstance(metadata, dict) and metadata.get("change"):  # issue 41: what the write changed
        lines.append(f"        改动: {metadata['change']}")
    if isinstance(metadata, dict) and metadata.get("mode"):
        extra = "".join(f", {k}={v}" for k, v in metadata.items() if k != "mode")
        lines.append(f"        浏览器: mode={metadata['mode']}{extra}")
    if isinstance(metadata, dict) and metadata.get("sandbox"):  # issue 24: how a command ran
        lines.append(f"        沙箱: {SANDBOX_SHOWN.get(metadata['sandbox'], metadata['sandbox'])}")
    return lines


def _edited(args: Any, proposed: Any) -> str:
    """The names of the arguments the user changed (``content``, ``path``…), when both parse."""
    try:
        ran, asked = (json.loads(v) if isinstance(v, str) else v for v in (args, proposed))
    except ValueError:
        return ""
    if not isinstance(ran, dict) or not isinstance(asked, dict):
        return ""
    return "、".join(k for k in sorted(set(ran) | set(asked)) if ran.get(k) != asked.get(k))


def _target(args: Any) -> str:
    """The command, path, URL or fact of an entry's arguments (stored as JSON text, cut at
    1 000 characters, so a long write's arguments no longer parse: then they are searched)."""
    try:
        value = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        value = _cut_target(args)
    if isinstance(value, dict):
        key = next((k for k in TARGET_KEYS if value.get(k) not in (None, "")), None)
        text = f"{key}: {value[key]}" if key else json.dumps(value, ensure_ascii=False)
    else:
        text = str(value or "")
    text = text.replace("\n", " ")
    return text if len(text) <= TARGET_CHARS else text[:TARGET_CHARS] + "…"


_TARGET_FIELD = re.compile(r'"(' + "|".join(TARGET_KEYS) + r')"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _cut_target(args: str) -> dict[str, str] | str:
    match = _TARGET_FIELD.search(args)
    if match is None:
        return args
    try:
        return {match.group(1): json.loads(f'"{match.group(2)}"')}
    except ValueError:
        return args
