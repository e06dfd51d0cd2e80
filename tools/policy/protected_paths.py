"""Project files whose writes always need the user's approval (paicli issue 10, item 6).

A write to one of these changes more than a file: git runs ``.git/hooks``, ``PAI.md`` becomes
next session's instructions, ``.mcp.json`` starts programs, CI runs ``.github/workflows``.
Everything ``execute_command``'s approval protects would otherwise be one ``write_file`` away,
so ``write_file`` / ``edit_file`` on them ask even in the default (auto) mode, and once the session
has read web or MCP content they need a person even under ``--yes`` (``approval.decide``).

Decisions where the issue left room:
- **Any depth.** Sub-projects and monorepo packages have their own ``.env``, ``PAI.md`` and
  ``.git`` and are opened as projects of their own; asking costs one keystroke.
- **Case-insensitive.** On macOS and Windows ``.GIT/hooks`` is ``.git/hooks``; on Linux the
  extra question for a file named ``Pai.md`` is harmless.
- **All of ``.paicli/``**, the offload files (``.paicli/tool-outputs/``) included: reading them
  is the point and reads are never gated, but a model-written file there would later be read
  back as if it were our own tool output.
- **A user skill's references** (``save_skill_reference``): they live in the user's home, not
  the project, but the next ``load_skill`` reads them as that skill's material, so every call
  asks as a protected write does. The tool refuses links at write time.
- **Lexical here, symlinks at write time.** The gate runs on the event loop, where
  ``langgraph dev`` refuses file-system calls, so ``protected_write`` only normalises text
  (``..``, ``./``, duplicate slashes). ``PathGuard.resolve_write`` then resolves symlinks and
  refuses a write that reaches a protected file by a path the gate did not see as protected.
"""

from __future__ import annotations

import os
from typing import Any

from paicli.tools.facts import ToolFacts


# Why each is protected, shown in the approval dialog and in a refusal the model reads.
GIT = "git 内部文件：hooks 会被 git 执行，config 可改变 git 的行为"
ENV = "环境变量文件：常含密钥，并会被工具自动加载"
PAI = "项目指令文件：下次会话会作为指令载入"
PAICLI = "paicli 的项目数据（配置、记忆与工具输出）"
MCP = "MCP 配置：可让 paicli 启动任意程序"
CI = "CI 工作流：推送后会在 CI 中执行"
SKILL = "用户 Skill 的参考文件：以后加载该 Skill 时会作为资料读取"
SHOWN_CHARS = 120  # of a model-written name or file in the notice


def protected_reason(parts: tuple[str, ...]) -> str | None:
    """Why the project-relative path ``parts`` is protected, or None."""
    folded = [p.casefold() for p in parts]
    for i, part in enumerate(folded):
        if part == ".git":
            return GIT
        if part == ".paicli":
            return PAICLI
        if part == ".github" and folded[i + 1:i + 2] == ["workflows"]:
            return CI
    name = folded[-1] if folded else ""
    if name.startswith(".env"):
        return ENV
    if name in ("pai.md", "pai.local.md"):
        return PAI
    if name == ".mcp.json":
        return MCP
    return None


def relative_parts(root: str, path: str) -> tuple[str, ...] | None:
    """``path`` relative to ``root`` by text alone, or None when it is outside (or ``~``)."""
    if path.startswith("~"):
        return None
    root = os.path.normpath(root)
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(root, path))
    if full == root:
        return ()
    if not full.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return tuple(full[len(root.rstrip(os.sep)) + 1:].split(os.sep))


def notice(parts: tuple[str, ...]) -> str | None:
    """The line the approval dialog shows, or None when the path is not protected."""
    reason = protected_reason(parts)
    return f"受保护路径 {'/'.join(parts)}（{reason}），写入需要用户确认" if reason else None


def protected_write(tool: str, args: Any, root: str, facts: ToolFacts) -> str | None:
    """The notice for a write or edit of a protected path; None for anything else (the tool's
    ``writes`` fact says which calls write, ``path_arg`` where; ``facts``: the call's)."""
    if facts.writes == "skill":
        return skill_reference_notice(args)
    if facts.writes != "project" or not facts.path_arg or not isinstance(args, dict):
        return None
    return protected_path(args.get(facts.path_arg), root)


def protected_path(path: Any, root: str) -> str | None:
    """The notice for writing ``path`` (as the call spells it, relative to ``root``), or None."""
    if not isinstance(path, str) or not path.strip():
        return None
    parts = relative_parts(root, path)
    return notice(parts) if parts is not None else None


def skill_reference_notice(args: Any) -> str:
    """Every ``save_skill_reference`` call asks, whatever its arguments look like."""
    values = args if isinstance(args, dict) else {}
    target = f"{_shown(values.get('name'))}/{_shown(values.get('file'))}"
    return f"写入 Skill 参考文件 {target}（{SKILL}），写入需要用户确认"


def _shown(value: Any) -> str:
    """A model-written value on one visible line, cut short."""
    text = "".join(c if c.isprintable() else " " for c in str(value or "?"))
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"
