"""What a sandboxed command may write: plain paths computed from the project, HOME and TMPDIR.

Pure apart from ``exists`` checks: the mechanisms (``bwrap``, ``seatbelt``) turn a ``Layout``
into their own language, and ``sweep`` undoes what a command created at a protected path.

The protected paths are the project root's own (paicli issue 24): the files git, paicli and CI
act on after the command is gone. Deeper copies (a sub-project's ``PAI.md``) are another
project's and are protected when that project is opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# Regenerable toolchain caches under HOME (issue 24): a sandbox that breaks `./gradlew test` gets switched off.
HOME_CACHES = (".cache", ".npm", ".yarn", ".pnpm-store", ".cargo", ".rustup", "go", ".gradle", ".m2", ".gem",
               ".bun", ".deno", ".nvm", ".local/share/pnpm", "Library/Caches")
TEMP_DIRS = ("/tmp", "/var/tmp")
# Project-relative protected paths and the rule each belongs to (shown when a write is refused).
PROTECTED = {
    ".git/hooks": "git hooks 会在之后的 git 操作中执行",
    ".git/config": "git 配置可以让之后的 git 操作运行任意程序",
    "PAI.md": "项目指令文件，下次会话会作为指令载入",
    "PAI.local.md": "项目指令文件，下次会话会作为指令载入",
    ".paicli": "paicli 的项目数据（配置、记忆与工具输出）",
    ".mcp.json": "MCP 配置可以让 paicli 启动任意程序",
    ".github/workflows": "CI 工作流，推送后会在 CI 中执行",
}
ENV_RULE = "环境变量文件，常含密钥并会被工具自动加载"  # .env, .env.local, ... at the project root
GIT_RULE = "git 仓库：hooks 与 config 会在之后的 git 操作中执行"  # a .git the command created
# Local daemons' sockets stay reachable through a read-only file system; these are masked.
DAEMON_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
                  "/run/podman/podman.sock")


@dataclass(frozen=True)
class Layout:
    root: Path
    writable: tuple[Path, ...]  # existing directories, the project first
    protected: tuple[Path, ...]  # existing protected paths inside the project: mounted read-only
    pinned: tuple[Path, ...]  # existing directories holding protected paths: cannot be renamed away
    missing: tuple[Path, ...]  # protected paths that do not exist yet: removed if a command creates them
    masked: tuple[Path, ...] = ()  # daemon sockets hidden from the command


def rule_for(root: Path, path: Path) -> str | None:
    """Why ``path`` (inside ``root``) is protected, or None."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return None
    if rel == ".git":
        return GIT_RULE
    if "/" not in rel and rel.startswith(".env"):
        return ENV_RULE
    for name, rule in PROTECTED.items():
        if rel == name or rel.startswith(name + "/"):
            return rule
    return None


def env_files(root: Path) -> list[Path]:
    """``.env*`` entries at the project root, existing now."""
    try:
        return sorted(root / e.name for e in os.scandir(root) if e.name.startswith(".env"))
    except OSError:
        return []


def layout(root: Path, env: dict[str, str], extra: tuple[str, ...] = ()) -> Layout:
    """``env`` is the command's environment (HOME, TMPDIR); ``extra``: PAICLI_SANDBOX_WRITABLE roots."""
    home = env.get("HOME") or ""
    candidates = [root, *(Path(t) for t in TEMP_DIRS), *([Path(env["TMPDIR"])] if env.get("TMPDIR") else []),
                  *((Path(home) / c) for c in HOME_CACHES if home), *(Path(e).expanduser() for e in extra)]
    writable = _existing_dirs(candidates)
    protected, missing, pinned = [], [], []
    git = root / ".git"
    for name in PROTECTED:
        path = root / name
        if os.path.lexists(path):
            protected.append(path)
        elif name.startswith(".git/") and not os.path.lexists(git):
            continue  # the whole new .git is swept (below)
        else:
            missing.append(path)
    if not os.path.lexists(git):
        missing.append(git)
    protected += env_files(root)  # a new .env* is found by listing the root again (sweep)
    for parent in {p.parent for p in protected + missing if p.parent != root}:
        if os.path.isdir(parent) and not os.path.islink(parent):
            pinned.append(parent)
    masked = tuple(Path(s) for s in DAEMON_SOCKETS if os.path.exists(s))
    return Layout(root, tuple(writable), tuple(protected), tuple(sorted(pinned)), tuple(missing), masked)


def _existing_dirs(paths: list[Path]) -> list[Path]:
    """Real directories, each once, in order (a symlinked cache is bound at its target)."""
    seen: list[Path] = []
    for path in paths:
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real.is_dir() and real not in seen:
            seen.append(real)
    return seen
