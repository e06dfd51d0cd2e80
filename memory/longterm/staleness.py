"""Might a memory be out of date? (reference m, with the decision on Q13 in docs/behavior.md#decisions)

Rule 1: not verified for more than N days (default 30; N ≤ 0 switches this rule off).
Rule 2 (Q13): a file linked in ``source_files`` was modified after the memory was last verified.
Paths are project-relative, so they resolve against the entry's own ``project`` key (or an
explicit root). A linked file that no longer exists also counts: the fact was about something
that changed. Global entries and entries without a project have no root, so Rule 2 skips them.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from enum import Enum
from pathlib import Path

from paicli.memory.longterm.config import DEFAULT_STALE_DAYS
from paicli.memory.longterm.entry import Entry



class Stale(Enum):
    AGE = "age"  # Rule 1
    FILES = "files"  # Rule 2 (Q13)


def stale_by_age(entry: Entry, now: datetime, days: int = DEFAULT_STALE_DAYS) -> bool:
    """reference (m): lastVerifiedAt + N days < now, strictly."""
    if days <= 0:
        return False
    return (entry.last_verified_at or entry.timestamp) + timedelta(days=days) < now


def stale_by_files(entry: Entry, root: str | os.PathLike[str] | None = None) -> bool:
    """Q13: a linked file changed (or vanished) after the memory was last verified."""
    base = root or entry.project
    if not base or not entry.source_files:
        return False
    verified = (entry.last_verified_at or entry.timestamp).timestamp()
    return any(_modified_after(Path(base, rel), verified) for rel in entry.source_files)


def _modified_after(path: Path, when: float) -> bool:
    try:
        return path.stat().st_mtime > when
    except FileNotFoundError:
        return True
    except OSError:
        return False  # unreadable (permissions): no evidence either way


def staleness(entry: Entry, now: datetime | None = None, days: int = DEFAULT_STALE_DAYS,
              root: str | os.PathLike[str] | None = None) -> Stale | None:
    """Why the entry may be stale, age first (its label is the reference's), or None."""
    now = now or datetime.now(UTC)
    if stale_by_age(entry, now, days):
        return Stale.AGE
    return Stale.FILES if stale_by_files(entry, root) else None
