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
# Local daemons' sockets stay reachable through a read-only file system, and some run what they
# are asked to outside the sandbox (a container, a systemd unit): these are masked, and so are the
# user's agent and session-bus sockets and their runtime directory.
DAEMON_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
                  "/run/podman/podman.sock", "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket",
                  "/run/systemd/private")


@dataclass(frozen=True)
class Layout:
    root: Path
    writable: tuple[Path, ...]  # existing directories, the project first
    protected: tuple[Path, ...]  # existing protected paths inside the project: mounted read-only
    pinned: tuple[Path, ...]  # existing directories holding protected paths: cannot be renamed away
    missing: tuple[Path, ...]  # protected paths that do not exist yet: removed if a command creates them
    masked: tuple[Path, ...] = ()  # daemon and agent sockets hidden from the command
    hidden: tuple[Path, ...] = ()  # directories replaced by an empty one (the user's runtime dir)


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
    """``env`` is the command's environment (HOME, TMPDIR); ``extra``: PAICLI_SANDBOX_WRITABLE roots.
    Runs before every command, so it works on strings (pathlib costs more than the stats)."""
    home, top = env.get("HOME") or "", str(root)
    candidates = [top, *TEMP_DIRS, *([env["TMPDIR"]] if env.get("TMPDIR") else []),
                  *(os.path.join(home, c) for c in HOME_CACHES if home), *(os.path.expanduser(e) for e in extra)]
    linked = linked_git(top)
    candidates += linked
    protected, missing, pinned = [], [], set(linked)
    for repo in linked[1:] or linked:  # the common directory holds the hooks and the config
        for path in (os.path.join(repo, "hooks"), os.path.join(repo, "config")):
            (protected if os.path.lexists(path) else missing).append(path)
    git_exists = os.path.lexists(os.path.join(top, ".git"))
    for name in PROTECTED:
        path = os.path.join(top, name)
        if os.path.lexists(path):
            protected.append(path)
        elif not name.startswith(".git/") or git_exists:
            missing.append(path)  # a missing .git is swept whole (below)
    if not git_exists:
        missing.append(os.path.join(top, ".git"))
    protected += [str(p) for p in env_files(root)]  # a new .env* is found by listing the root again (sweep)
    for path in protected + missing:
        parent = os.path.dirname(path)
        if parent != top and os.path.isdir(parent) and not os.path.islink(parent):
            pinned.add(parent)
    return Layout(root, tuple(Path(p) for p in _existing_dirs(candidates)), tuple(Path(p) for p in protected),
                  tuple(Path(p) for p in sorted(pinned)), tuple(Path(p) for p in missing), *_sockets(env))


def _sockets(env: dict[str, str]) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(sockets to mask, directories to hide): daemons, the ssh agent, the session bus."""
    bus = env.get("DBUS_SESSION_BUS_ADDRESS", "")
    agents = [env.get("SSH_AUTH_SOCK", ""), bus.split("path=", 1)[1].split(",")[0] if "path=" in bus else ""]
    masked = tuple(Path(s) for s in (*DAEMON_SOCKETS, *agents) if s and os.path.exists(s))
    runtime = f"/run/user/{os.getuid()}" if hasattr(os, "getuid") else ""
    return masked, tuple(Path(d) for d in [runtime] if d and os.path.isdir(d))


def linked_git(top: str) -> list[str]:
    """A worktree's or submodule's ``.git`` is a file naming the repository elsewhere: its git
    directory and common directory must be writable for ``git commit`` (their hooks and config
    are protected like the project's own)."""
    try:
        with open(os.path.join(top, ".git"), encoding="utf-8") as f:
            text = f.read(4096)
    except OSError:  # no .git, or a directory
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = os.path.normpath(os.path.join(top, text[len("gitdir:"):].strip()))
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
            common = os.path.normpath(os.path.join(gitdir, f.read().strip()))
    except OSError:
        return [gitdir] if os.path.isdir(gitdir) else []
    return [d for d in (gitdir, common) if os.path.isdir(d)]


def _existing_dirs(paths: list[str]) -> list[str]:
    """Real directories, each once, in order (a symlinked cache is bound at its target)."""
    seen: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and os.path.isdir(real):
            seen.append(real)
    return seen
