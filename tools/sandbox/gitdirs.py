"""All of ``.git`` is protected except what ordinary git needs (paicli issue 34, item 6).

git writes every file of its repository through a ``<name>.lock`` beside it, renamed into place,
so a git directory must stay writable as a directory for ``git add/commit/checkout -b/branch/
stash/merge`` to work. What it needs are the entries of ``GIT_NEEDED`` (objects, refs, logs,
index, HEAD and its siblings). Every other entry (``config``, ``config.worktree``, ``hooks/``,
``info/``, ``modules/``, ``worktrees/``, ``commondir``, ``remotes/``, ``branches/``, ...) is mounted
read-only when it exists and removed after the command when the command created it: they are
what makes a later ``git status`` run a program (``core.fsmonitor``, a hook) or look elsewhere
(``commondir``, a submodule's git dir).

A ``.git`` file (a linked worktree, a submodule) is honoured only when it names a real git dir
that points back at this project (a worktree's ``gitdir`` file, a submodule's ``core.worktree``),
never HOME or ``/``. Nested repositories a command creates where the user's next ``git`` reaches
them (at a submodule path, in a tracked directory, at the top level) keep their objects and refs
and lose everything else.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass

# The entries of a git dir that ordinary git writes (lock files of any of them too).
GIT_NEEDED = (
    "objects", "refs", "logs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE",
    "MERGE_RR", "MERGE_AUTOSTASH", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "BISECT_*",
    "COMMIT_EDITMSG", "SQUASH_MSG", "TAG_EDITMSG", "NOTES_EDITMSG", "EDIT_DESCRIPTION", "packed-refs",
    "rebase-merge", "rebase-apply", "sequencer", "shallow", "gc.pid", "gc.log", "lost-found", "rr-cache",
    "sharedindex.*", "reftable", "*.lock", "description",
)
# Named in the rules the model reads when a write is refused.
RULES = {
    "config": "git 配置可以让之后的 git 操作运行任意程序（core.fsmonitor、core.hooksPath）",
    "config.worktree": "git 配置可以让之后的 git 操作运行任意程序",
    "hooks": "git hooks 会在之后的 git 操作中执行",
    "commondir": "commondir 让 git 改读另一个仓库的配置与 hooks",
    "modules": "子模块的配置与 hooks 会在之后的 git status 中执行",
    "worktrees": "其他工作树的配置与 hooks",
    "info": "git 的 info/ （attributes、exclude）改变之后的 git 操作",
}
OTHER_RULE = "git 仓库里除对象、引用、索引和 HEAD 以外的内容会改变之后的 git 操作"
MAX_TRACKED_DIRS = 5000  # tracked directories checked for a nested .git after each command
GIT_TIMEOUT = 5.0


_NEEDED = re.compile("|".join(fnmatch.translate(p) for p in GIT_NEEDED))


def needed(name: str) -> bool:
    return _NEEDED.match(name) is not None


def rule(name: str) -> str:
    return RULES.get(name, OTHER_RULE)


@dataclass(frozen=True)
class GitDir:
    path: str
    entries: frozenset[str]  # its top-level entries before the command


def entries(path: str) -> frozenset[str]:
    try:
        return frozenset(os.listdir(path))
    except OSError:
        return frozenset()


def guarded(path: str) -> tuple[GitDir, list[str]]:
    """A git dir and the existing entries of it to mount read-only (all but the needed ones)."""
    seen = entries(path)
    return GitDir(path, seen), [os.path.join(path, e) for e in sorted(seen) if not needed(e)]


def sweep(gitdir: GitDir) -> list[str]:
    """Remove what the command created in ``gitdir`` besides the needed entries; their names."""
    removed = []
    for name in sorted(entries(gitdir.path) - gitdir.entries):
        if needed(name):
            continue
        if remove(os.path.join(gitdir.path, name)):
            removed.append(name)
    return removed


def remove(path: str) -> bool:
    """Remove ``path`` itself: a link as the link, a directory without following links inside."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return False
    except OSError:
        return False
    return True


def _read(path: str, limit: int = 4096) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return ""


_WORKTREE = re.compile(r"^\s*worktree\s*=\s*(.+?)\s*$", re.MULTILINE)


def linked(top: str) -> list[str]:
    """A worktree's or submodule's ``.git`` file: its git dir (and common dir), when they point
    back at ``top``; [] for anything else (no file, a directory, a ``gitdir:`` naming HOME)."""
    dotgit = os.path.join(top, ".git")
    if not os.path.isfile(dotgit) or os.path.islink(dotgit):
        return []
    text = _read(dotgit)
    if not text.startswith("gitdir:"):
        return []
    gitdir = os.path.realpath(os.path.join(top, text[len("gitdir:"):].strip()))
    if not os.path.isdir(os.path.join(gitdir, "objects")) and not os.path.isfile(os.path.join(gitdir, "commondir")):
        return []
    if gitdir in ("/", os.path.realpath(os.path.expanduser("~"))) or _under(os.path.realpath(top), gitdir):
        return []
    back = _read(os.path.join(gitdir, "gitdir")).strip()  # a worktree: <top>/.git
    if back:
        if os.path.realpath(os.path.join(gitdir, back)) != os.path.realpath(dotgit):
            return []
    else:  # a submodule: core.worktree names the checkout
        found = _WORKTREE.search(_read(os.path.join(gitdir, "config"), 65536))
        if not found or os.path.realpath(os.path.join(gitdir, found.group(1).strip('"'))) != os.path.realpath(top):
            return []
    common_text = _read(os.path.join(gitdir, "commondir")).strip()
    if not common_text:
        return [gitdir]
    common = os.path.realpath(os.path.join(gitdir, common_text))
    if common in ("/", os.path.realpath(os.path.expanduser("~"))) or not os.path.isdir(os.path.join(common, "objects")):
        return []
    return [gitdir, common]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class Tracked:
    """Submodule paths and tracked directories of a project, from its index (read again only when
    the index changed): where the user's next ``git`` would meet a nested repository."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple, tuple[str, ...], tuple[str, ...]]] = {}

    def of(self, top: str, gitdir: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(gitlink paths, tracked directories), both absolute."""
        index = os.path.join(gitdir, "index")
        try:
            st = os.stat(index)
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            return (), ()
        with self._lock:
            cached = self._cache.get(top)
            if cached and cached[0] == key:
                return cached[1], cached[2]
        links, dirs = _read_index(top)
        with self._lock:
            self._cache[top] = (key, links, dirs)
        return links, dirs


def _read_index(top: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    from paicli.tools.sandbox.own import child_environment, git

    try:
        done = subprocess.run([git(), "--no-optional-locks", "-c", "core.fsmonitor=false", "-c",
                               "core.hooksPath=/dev/null", "-C", top, "ls-files", "-s", "-z"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              env=child_environment(GIT_CONFIG_NOSYSTEM="1"))
    except (OSError, subprocess.SubprocessError):
        return (), ()
    if done.returncode != 0:
        return (), ()
    links, dirs = [], set()
    for entry in done.stdout.split(b"\0"):
        info, _, raw = entry.partition(b"\t")
        if not raw:
            continue
        path = os.fsdecode(raw)
        if info.startswith(b"160000"):
            links.append(os.path.join(top, path))
        parent = os.path.dirname(path)
        while parent and parent not in dirs and len(dirs) < MAX_TRACKED_DIRS:
            dirs.add(parent)
            parent = os.path.dirname(parent)
    return tuple(links), tuple(os.path.join(top, d) for d in sorted(dirs))


TRACKED = Tracked()  # one per process: the index is read again only when it changed
