"""Protected paths a sandboxed command created are removed once it has ended.

A bind mount needs its mount point to exist, and bwrap would create it inside the real project,
so paths that do not exist yet (``PAI.md``, ``.mcp.json``, ``.env.local``, a new ``.git``) cannot
be mounted over. Instead they are noted before the command and removed after it, when nothing it
started is alive any more (the sandbox's pid namespace ends with it).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from tools.sandbox.layout import GIT_RULE, Layout, env_files, rule_for


@dataclass(frozen=True)
class Before:
    missing: tuple[Path, ...]  # protected paths absent before the command
    env: frozenset[Path]  # the root's .env* entries before the command


def before(plan: Layout) -> Before:
    return Before(tuple(p for p in plan.missing if not os.path.lexists(p)), frozenset(env_files(plan.root)))


def undo(plan: Layout, seen: Before) -> list[tuple[str, str]]:
    """Remove what the command created; returns (project-relative path, rule) for each."""
    created = [p for p in seen.missing if os.path.lexists(p)]
    created += [p for p in env_files(plan.root) if p not in seen.env]
    removed = []
    for path in created:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError:
            continue
        shown = path.relative_to(plan.root).as_posix() if path.is_relative_to(plan.root) else str(path)
        removed.append((shown, rule_for(plan.root, path) or GIT_RULE))
    return removed
