"""Protected paths a sandboxed command created are removed once it has ended.

A bind mount needs its mount point to exist, and bwrap would create it inside the real project,
so paths that do not exist yet (``PAI.md``, ``.mcp.json``, ``.env.local``, a new ``.git``, a git
dir's new ``commondir`` or ``hooks/``) cannot be mounted over. Instead they are noted before the
command and removed after it, when nothing it started is alive any more (the sandbox's pid
namespace ends with it).

Every removal stays inside the project (paicli issue 34, item 10): a path is removed only when
its real path is inside the project, and a protected path whose parent the command made a link
(``ln -s ~/other/.github .github``) is removed as that link, never followed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from paicli.tools.sandbox import gitdirs
from paicli.tools.sandbox.layout import GIT_RULE, Layout, env_files, nested_candidates, rule_for


@dataclass(frozen=True)
class Before:
    missing: tuple[Path, ...]  # protected paths absent before the command
    env: frozenset[Path]  # the root's .env* entries before the command


def before(plan: Layout) -> Before:
    return Before(tuple(p for p in plan.missing if not _exists_inside(plan.root, p)), frozenset(env_files(plan.root)))


def _link_on_the_way(root: Path, path: Path) -> Path | None:
    """The first component between ``root`` and ``path`` (``path`` included) that is a link."""
    top, full = str(root), str(path)
    if not full.startswith(top.rstrip("/") + "/"):
        return None
    current = top
    for part in full[len(top):].strip("/").split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return Path(current)
        if not os.path.lexists(current):
            return None
    return None


def _exists_inside(root: Path, path: Path) -> bool:
    """``path`` exists as itself (no link on the way counts as the path existing)."""
    link = _link_on_the_way(root, path)
    return link is not None or os.path.lexists(path)


def _inside(root: Path, path: Path) -> bool:
    real = os.path.realpath(path.parent) if path.is_symlink() else os.path.realpath(path)
    top = os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def _remove(root: Path, path: Path) -> Path | None:
    """Remove ``path`` (or the link standing in for its parent); what was removed, or None."""
    target = _link_on_the_way(root, path) or path
    if not os.path.lexists(target) or not _inside(root, target):
        return None
    return target if gitdirs.remove(str(target)) else None


def undo(plan: Layout, seen: Before) -> list[tuple[str, str]]:
    """Remove what the command created; returns (project-relative path, rule) for each."""
    created = [p for p in seen.missing if _exists_inside(plan.root, p)]
    created += [p for p in env_files(plan.root) if p not in seen.env]
    removed = []
    for path in created:
        gone = _remove(plan.root, path)
        if gone is not None:
            removed.append((_shown(plan.root, gone), rule_for(plan.root, gone) or GIT_RULE))
    for gitdir in plan.gitdirs:
        for name in gitdirs.sweep(gitdir):
            path = Path(gitdir.path, name)
            removed.append((_shown(plan.root, path), gitdirs.rule(name)))
    again, _ = nested_candidates(str(plan.root), plan.git_dir, gitdirs.TRACKED)  # new submodules, new dirs
    for candidate in dict.fromkeys([*plan.nested, *map(Path, again)]):
        inner = candidate / ".git"
        if candidate in plan.seen_nested or not os.path.lexists(inner) or not _inside(plan.root, candidate):
            continue
        if inner.is_dir() and not inner.is_symlink():
            names = gitdirs.sweep(gitdirs.GitDir(str(inner), frozenset()))
            removed += [(_shown(plan.root, inner / n), gitdirs.rule(n)) for n in names]
        elif gitdirs.remove(str(inner)):
            removed.append((_shown(plan.root, inner), GIT_RULE))
    return removed


def _shown(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
