"""PathGuard and CommandGuard: the built-in refusals no approval can override (v.4).

CommandGuard parses the command (``paicli.tools.policy.shell_parse``) and judges each simple command
(``paicli.tools.policy.command_rules``), then reads the shell scripts it runs and judges them the same
way (``paicli.tools.policy.scripts``). What bashlex cannot parse falls back to the reference's text rules,
and is refused outright when it names a command the rules watch: a check that cannot read
the command must not let it through under ``--yes`` (there is nobody to ask then).
A script a command runs is judged as strictly only when it is fresh (written since this process
started); one that was already there is refused only for what it certainly does (``scripts``).

Both raise ``PolicyError``; the executor shows it as ``🛡️ 策略拒绝: <reason>``.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from paicli.tools.base import PolicyError
from paicli.tools.policy.command_rules import refusal
from paicli.tools.policy.script_files import PROCESS_STARTED
from paicli.tools.policy.scripts import script_refusal
from paicli.tools.policy.shell_parse import Doubt, parse
from paicli.tools.policy.shell_words import SHELLS
from paicli.tools.policy.protected_paths import notice, protected_path


class PathGuard:
    """Confines tool paths to the project root, symlinks included (reference v.5)."""

    def __init__(self, root: Path | str):
        if not str(root).strip():
            raise PolicyError("项目根路径不能为空")
        # realpath so a root under a symlinked dir (macOS /var → /private/var) still compares equal.
        self.raw_root = root  # as the approval gate saw it (it never touches the file system)
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

    def resolve_write(self, path_str: str | None) -> Path:
        """``resolve`` for write_file / edit_file, refusing a protected target reached by a path
        the approval gate did not see as protected (a symlink, or another spelling of the root):
        the gate judges the text alone, so only this spelling was ever put to the user."""
        resolved = self.resolve(path_str)
        parts = resolved.relative_to(self.root).parts
        if notice(parts) and protected_path(path_str, str(self.raw_root)) is None:
            raise PolicyError(f"{path_str} 实际指向{notice(parts)}；请直接使用路径 {'/'.join(parts)}")
        return resolved

    def _escape(self, text: str) -> PolicyError:
        return PolicyError(f"路径越界: {text} 不在项目根 {self.root} 之内")


# reference (v.6): reason and pattern, first match wins. A `|` between shell commands is a
# literal `\|`; the `|` inside groups is alternation. Matching text is only the fallback for
# what bashlex cannot parse (see CommandGuard); the fork bomb is always matched as text.
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
_FORK_BOMB = 4

# Names that make a command worth refusing when bashlex cannot parse it (it lacks `case`,
# `time`, arithmetic `$((…))` and a few here-document forms).
_SENSITIVE = frozenset({"rm", "sudo", "doas", "su", "pkexec", "dd", "mkfs", "shutdown", "reboot", "halt",
                        "poweroff", "eval", "exec", "curl", "wget", "base64", "xxd", "chmod", "find", "xargs",
                        "source", *SHELLS})
UNPARSEABLE = "无法解析该命令的语法，且其中含有 {}：请改写为更简单的形式（拆成多条命令，避免 case、time、算术展开等）"


class CommandGuard:
    """Refuses destructive shell commands before they run (reference v.6, parsed: issue 10 item 7)."""

    rules: list[tuple[str, re.Pattern[str]]] = [(reason, re.compile(p)) for reason, p in _COMMAND_RULES]

    @classmethod
    def check(cls, command: str, root: Path | str, home: str | None = None, started: float = PROCESS_STARTED) -> None:
        reason = cls.refusal(command, str(root), os.path.expanduser("~") if home is None else home, started)
        if reason:
            raise PolicyError(reason)

    @classmethod
    def refusal(cls, command: str, root: str, home: str | None, started: float = PROCESS_STARTED) -> str | None:
        """Why ``command``, run in ``root``, is refused, or None. Reads the scripts it runs, so
        it blocks: the tool calls it in a worker thread. A script changed at or after ``started``
        is fresh (see ``paicli.tools.policy.script_files``)."""
        normalized = " ".join(command.split())
        if cls.rules[_FORK_BOMB][1].search(normalized):
            return cls.rules[_FORK_BOMB][0]
        try:
            parsed = parse(command, os.path.normpath(root), home)
        except PolicyError as exc:
            return exc.reason
        except Exception:  # bashlex is incomplete; what it cannot read is judged as text
            return cls.unparseable(command, normalized)
        return refusal(parsed, root) or script_refusal(parsed, command, root, cls.unparseable_text, started)

    @classmethod
    def unparseable_text(cls, text: str) -> str | None:
        return cls.unparseable(text, " ".join(text.split()))

    @classmethod
    def unparseable(cls, command: str, normalized: str) -> str | None:
        """The reference's text rules (a certain reason), else, when it mentions a sensitive
        command, a Doubt: it cannot be checked."""
        for reason, pattern in cls.rules:
            if pattern.search(normalized):
                return reason
        if re.search(r"\$\((?!\()|`", command):  # $(…) or `…`, but not arithmetic $((…))
            return Doubt(UNPARSEABLE.format("命令替换"))
        try:
            tokens = shlex.split(command, comments=True)
        except ValueError:
            tokens = command.split()
        names = {os.path.basename(t.strip("();&|<>{}")) for t in tokens}
        found = sorted(n for n in names if n in _SENSITIVE or n.startswith("mkfs."))
        return Doubt(UNPARSEABLE.format("、".join(found))) if found else None
