"""Tier 1: oversized tool output goes to a session file; the context keeps head and tail (reference d).

Files live inside the project (``.paicli/tool-outputs/<session>/NNN-<tool>.txt``) because
``read_file`` is confined to the project root; the model reads them back with offset/limit.
Ranged reads and reads of those files are never offloaded again, or the model could never reach
the original text (offload -> read back -> offload loop).

Lengths are Python characters (code points); Java counts UTF-16 units, which differs only for
characters outside the BMP.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_THRESHOLD_CHARS = 32_000  # reference (d.1)
MIN_THRESHOLD_CHARS = 2_000  # reference (d.1): smaller settings are raised to this
OUTPUT_DIR = ".paicli/tool-outputs"  # reference (d.1)
PROJECT_DIR = ".paicli"
# Beyond the reference: <project>/.paicli/ ignores everything paicli writes there, so a user's
# `git add .` never commits offloaded tool output. The files a user writes there for the team
# (reference i, q.1, s: PAI.md, prompt overrides, skills) stay visible; PAI.local.md stays private.
PROJECT_DIR_GITIGNORE = (
    "# Written by paicli: its own files here (tool output, session data) stay out of git.\n"
    "*\n"
    "# Shared project files you add yourself stay visible.\n"
    "!PAI.md\n!prompts/\n!prompts/**\n!skills/\n!skills/**\n"
)
HEAD_PREVIEW_CHARS = 2_000  # reference (d.1)
TAIL_PREVIEW_CHARS = 800  # reference (d.1)
SUGGESTED_READ_LINES = 200  # reference (d.1)
MAX_COMMAND_OUTPUT_CHARS = 8_000  # reference (d.5): also the command's head preview
MAX_COMMAND_CAPTURE_CHARS = 2_000_000  # reference (d.5)
COMMAND_TOOL = "execute_command"

_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_NUMBERED = re.compile(r"^(\d{3,})-")


def parse_threshold(text: str | None) -> int:
    """reference (d.1): a value that does not parse falls back to 32000; small ones become 2000."""
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return DEFAULT_THRESHOLD_CHARS
    return max(MIN_THRESHOLD_CHARS, value)


def head_preview(content: str, chars: int) -> str:
    """The first ``chars``, cut back to the last newline when that keeps more than half."""
    if len(content) <= chars:
        return content
    cut = content[:chars]
    newline = cut.rfind("\n")
    return cut[:newline] if newline > chars // 2 else cut


def tail_preview(content: str, chars: int = TAIL_PREVIEW_CHARS) -> str:
    """The last ``chars``, starting after the first newline when it is in the first half."""
    cut = content[-chars:]
    newline = cut.find("\n")
    return cut[newline + 1:] if 0 <= newline < chars // 2 else cut


def line_count(content: str) -> int:
    """Java ``String.lines().count()``: \\n, \\r and \\r\\n end lines; no empty last line."""
    breaks = content.count("\n") + content.count("\r") - content.count("\r\n")
    return breaks + (1 if content and not content.endswith(("\n", "\r")) else 0)


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else {}
    except ValueError:
        parsed = {}
    return parsed if isinstance(parsed, dict) else {}


def ensure_project_dir(project_root: Path) -> Path:
    """``<project>/.paicli``, created if needed, with its .gitignore (an existing one is kept).

    Everything paicli writes under the project's .paicli goes through here first."""
    directory = Path(project_root) / PROJECT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    try:
        with (directory / ".gitignore").open("x", encoding="utf-8") as handle:
            handle.write(PROJECT_DIR_GITIGNORE)
    except FileExistsError:
        pass
    return directory


def safe_tool_name(tool_name: str) -> str:
    return _UNSAFE_FILE_CHARS.sub("_", tool_name or "")[:60] or "tool"


class ToolResultOffloader:
    """One per session; thread-safe, since parallel tool calls offload concurrently."""

    def __init__(self, project_root: Path | str, session_id: str, *,
                 threshold: int = DEFAULT_THRESHOLD_CHARS, enabled: bool = True):
        self.project_root = Path(project_root)
        self.session_id = _UNSAFE_FILE_CHARS.sub("_", session_id) or "session"
        self.threshold = max(MIN_THRESHOLD_CHARS, threshold)
        self.enabled = enabled
        self._lock = threading.Lock()

    @property
    def capture_limit(self) -> int:
        """reference (d.5): how much command output to keep in memory before cutting."""
        return MAX_COMMAND_CAPTURE_CHARS if self.enabled else MAX_COMMAND_OUTPUT_CHARS

    def is_exempt(self, arguments: Any, *, ranged_read: bool) -> bool:
        """reference (d.3): ranged read_file calls and reads of offloaded files are never offloaded
        (``ranged_read``: the tool's fact, ``paicli.tools.facts.ToolFacts``: read_file's)."""
        if not ranged_read:
            return False
        args = _arguments(arguments)
        if args.get("offset") is not None or args.get("limit") is not None:
            return True
        path = str(args.get("path") or "").replace("\\", "/")
        if path.startswith((OUTPUT_DIR, "./" + OUTPUT_DIR)):
            return True
        # Beyond the reference: an absolute path into the same directory is the same file.
        root = (self.project_root / OUTPUT_DIR).as_posix().rstrip("/") + "/"
        return path.startswith(root)

    def offload_if_oversized(self, tool_name: str, arguments: Any, content: str | None, *,
                             ranged_read: bool = False) -> str | None:
        """``content``, or its preview when it is too long and went to a file; ``ranged_read``: the
        tool reads with offset/limit (read_file), whose such reads are exempt (``is_exempt``)."""
        if not self.enabled or content is None or len(content) <= self.threshold:
            return content
        if self.is_exempt(arguments, ranged_read=ranged_read):
            return content
        return self.offload(tool_name, content)

    def command_output(self, output: str) -> str:
        """reference (d.5): what the model sees of a command's merged stdout/stderr.

        ``output`` already ends with the capture-overflow note when the capture was cut."""
        return self.offloaded_command_output(output)[0]

    def offloaded_command_output(self, output: str) -> tuple[str, str | None]:
        """``command_output``, and the project-relative file the whole output went to (None when
        it was short enough, or not offloaded): the preview under the call names it (issue 41)."""
        if len(output) <= MAX_COMMAND_OUTPUT_CHARS:
            return output, None
        if self.enabled:
            return self._offloaded(COMMAND_TOOL, output, head_chars=MAX_COMMAND_OUTPUT_CHARS)
        return output[:MAX_COMMAND_OUTPUT_CHARS] + "\n...(输出已截断)", None

    def offload(self, tool_name: str, content: str, head_chars: int = HEAD_PREVIEW_CHARS) -> str:
        return self._offloaded(tool_name, content, head_chars)[0]

    def _offloaded(self, tool_name: str, content: str, head_chars: int) -> tuple[str, str | None]:
        try:
            relative = self._write(tool_name, content)
        except OSError as exc:
            log.warning("tool output offload failed: %s", exc)
            return content[: self.threshold] + f"\n...(输出过大且写入会话文件失败，已截断，原始 {len(content)} 字符)", None
        return offload_summary(tool_name, content, relative, head_chars), relative

    def _write(self, tool_name: str, content: str) -> str:
        ensure_project_dir(self.project_root)
        base = self.project_root / OUTPUT_DIR
        directory = base / self.session_id
        directory.mkdir(parents=True, exist_ok=True)
        ignore = base / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
        with self._lock:
            number = self._next_number(directory)
            while True:
                path = directory / f"{number:03d}-{safe_tool_name(tool_name)}.txt"
                try:
                    with path.open("x", encoding="utf-8") as handle:  # never overwrite an earlier output
                        handle.write(content)
                    break
                except FileExistsError:
                    number += 1
        return path.relative_to(self.project_root).as_posix()

    @staticmethod
    def _next_number(directory: Path) -> int:
        # A resumed session (another process) continues the numbering instead of overwriting.
        numbers = [int(m.group(1)) for p in directory.iterdir() if (m := _NUMBERED.match(p.name))]
        return max(numbers, default=0) + 1


def offload_summary(tool_name: str, content: str, relative: str, head_chars: int = HEAD_PREVIEW_CHARS) -> str:
    """reference (d.3): the text that replaces an offloaded output in the context."""
    text = (
        "[工具输出过大，完整内容已卸载到会话文件]\n"
        f"tool: {tool_name}\n"
        f"原始大小: {len(content)} 字符 / {line_count(content)} 行\n"
        f"文件: {relative}\n"
        f'读回: read_file {{"path":"{relative}","offset":1,"limit":{SUGGESTED_READ_LINES}}}，按需调整 offset 分段读取\n'
        "--- 开头预览 ---\n"
        f"{head_preview(content, head_chars)}"
    )
    if len(content) > head_chars + TAIL_PREVIEW_CHARS:
        text += f"\n--- 结尾预览 ---\n{tail_preview(content)}"
    return text
