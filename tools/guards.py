"""PathGuard and CommandGuard: the built-in refusals no approval can override (v.4).

Both raise ``PolicyError``; the executor shows it as ``🛡️ 策略拒绝: <reason>``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tools.base import PolicyError


class PathGuard:
    """Confines tool paths to the project root, symlinks included (reference v.5)."""

    def __init__(self, root: Path | str):
        if not str(root).strip():
            raise PolicyError("项目根路径不能为空")
        # realpath so a root under a symlinked dir (macOS /var → /private/var) still compares equal.
        self.root = Path(os.path.realpath(os.path.abspath(root)))

    def resolve(self, path_str: str | None) -> Path:
        if path_str is None or not str(path_str).strip():
            raise PolicyError("路径不能为空")
        text = str(path_str)
        # A leading ~ means "home" to users and models; refuse rather than make a dir named "~".
        if text.startswith("~"):
            raise self._escape(text)
        candidate = Path(os.path.normpath(self.root / text))  # absolute input replaces the root
        # realpath resolves symlinks in the longest existing prefix and keeps the missing rest,
        # i.e. v.5 step 3 (nearest existing ancestor + remainder).
        resolved = Path(os.path.realpath(candidate))
        if not resolved.is_relative_to(self.root):
            raise self._escape(text)
        return resolved

    def _escape(self, text: str) -> PolicyError:
        return PolicyError(f"路径越界: {text} 不在项目根 {self.root} 之内")


# reference (v.6): reason and pattern, first match wins. A `|` between shell commands is a
# literal `\|`; the `|` inside groups is alternation.
_COMMAND_RULES: list[tuple[str, str]] = [
    ("禁止 sudo 提权", r"(?i)\bsudo\b"),
    (
        "禁止 rm -rf 删除全盘或用户目录",
        r"(?i)\brm\s+-[a-z]*r[a-z]*f[a-z]*\s+(/|~|\$home)|\brm\s+-[a-z]*f[a-z]*r[a-z]*\s+(/|~|\$home)",
    ),
    ("禁止 mkfs 格式化磁盘", r"(?i)\bmkfs(\.|\b)"),
    ("禁止 dd 写入裸设备", r"(?i)\bdd\b[^\n]*\bof=/dev/"),
    ("识别为 fork bomb", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
    ("禁止 curl / wget 管道直接执行远端脚本", r"(?i)\b(curl|wget)\b[^|\n]*\|\s*(sh|bash|zsh|fish|ksh)\b"),
    ("不允许扫描 /、~ 或整个文件系统", r"(?i)\bfind\s+(/|~|\$home)"),
    ("禁止 chmod 777 全盘", r"(?i)\bchmod\s+-R\s+777\s+(/|~)"),
    ("禁止 shutdown / reboot / halt", r"(?i)\b(shutdown|reboot|halt|poweroff)\b"),
]


class CommandGuard:
    """Refuses obviously destructive shell commands before they run (reference v.6)."""

    rules: list[tuple[str, re.Pattern[str]]] = [(reason, re.compile(p)) for reason, p in _COMMAND_RULES]

    @classmethod
    def check(cls, command: str) -> None:
        normalized = " ".join(command.split())
        for reason, pattern in cls.rules:
            if pattern.search(normalized):
                raise PolicyError(reason)
