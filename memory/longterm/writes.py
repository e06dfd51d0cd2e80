"""The write paths of reference (j.4) as plain functions on a list of entries.

They edit the list in place so they can run inside ``MemoryFile.mutate`` on the freshest state
read under the lock: ``memory.mutate(lambda entries: write_explicit(entries, fact, ...))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from operator import attrgetter

from paicli.memory.longterm.conflict import DEFAULT_THRESHOLD, find_conflicts
from paicli.memory.longterm.dedup import find_duplicate
from paicli.memory.longterm.entry import Entry, is_visible_in_project, with_next_id
from paicli.memory.longterm.write_index import WriteIndex
from paicli.memory.longterm.write_result import MemoryWriteResult, WriteStatus


def store(entries: list[Entry], entry: Entry, index: WriteIndex | None = None) -> bool:
    """reference (j.4.1): the low-level path; skips duplicates, never checks conflicts."""
    others = [e for e in entries if e.id != entry.id]
    if find_duplicate(_pool(others, entry, DEFAULT_THRESHOLD, index), entry) is not None:
        return False
    _put(entries, entry)
    return True


def write_explicit(entries: list[Entry], entry: Entry, *, replace_id: str | None = None,
                   allow_conflict: bool = False, project_key: str | None = None,
                   threshold: float = DEFAULT_THRESHOLD, index: WriteIndex | None = None) -> MemoryWriteResult:
    """reference (j.4.2): ``/save``, ``/memory replace`` and ``save_memory``. ``index``: the
    file's ``WriteIndex`` for ``entries`` as given (``MemoryFile.write_index``); same answers."""
    target = _visible(entries, replace_id, project_key) if replace_id else None
    if replace_id and target is None:
        return MemoryWriteResult(WriteStatus.REPLACE_TARGET_NOT_FOUND, entry, entry.scope,
                                 target_id=replace_id)
    others = _pool(entries if target is None else [e for e in entries if e.id != target.id], entry, threshold, index)
    duplicate = find_duplicate(others, entry)
    if duplicate is not None:
        return _refresh_duplicate(entries, duplicate, entry, target)
    conflicts = [] if allow_conflict else find_conflicts(others, entry, threshold)
    if conflicts:  # write nothing: the user chooses (reference l)
        return MemoryWriteResult(WriteStatus.CONFLICT, entry, entry.scope, conflicts=tuple(conflicts))
    if target is not None:
        entries.remove(target)
    entry = _put_new(entries, entry)
    status = WriteStatus.REPLACED if target is not None else WriteStatus.STORED
    return MemoryWriteResult(status, entry, entry.scope, replaced=target)


def write_automatic(entries: list[Entry], entry: Entry, threshold: float = DEFAULT_THRESHOLD,
                    index: WriteIndex | None = None) -> bool:
    """reference (j.4.3): auto extraction never refreshes, replaces or overrides a conflict."""
    if any(e.id == entry.id and e.content == entry.content for e in entries):
        return False  # this very fact again
    pool = _pool(entries, entry, threshold, index)
    if find_duplicate(pool, entry) is not None or find_conflicts(pool, entry, threshold):
        return False
    _put_new(entries, entry)
    return True


def write_automatic_all(entries: list[Entry], facts: Sequence[Entry],
                        threshold: float = DEFAULT_THRESHOLD, index: WriteIndex | None = None) -> list[Entry]:
    """``write_automatic`` each fact in turn; returns the facts actually written."""
    return [fact for fact in facts if write_automatic(entries, fact, threshold, index)]


def mark_verified(entries: list[Entry], entry_id: str, now: datetime) -> Entry | None:
    """reference (j.4.4): ``/memory verify`` (the user only; the model has no tool for it)."""
    for i, entry in enumerate(entries):
        if entry.id == entry_id:
            entries[i] = entry.with_last_verified_at(now)
            return entries[i]
    return None


def delete(entries: list[Entry], entry_id: str, project_key: str | None = None) -> Entry | None:
    target = _visible(entries, entry_id, project_key)
    if target is not None:
        entries.remove(target)
    return target


def _refresh_duplicate(entries: list[Entry], duplicate: Entry, entry: Entry,
                       target: Entry | None) -> MemoryWriteResult:
    refreshed = duplicate.with_last_verified_at(entry.last_verified_at or entry.timestamp)
    entries[entries.index(duplicate)] = refreshed
    if target is not None:
        entries.remove(target)
    return MemoryWriteResult(WriteStatus.DUPLICATE, entry, entry.scope, duplicate=refreshed)


def _pool(entries: list[Entry], entry: Entry, threshold: float, index: WriteIndex | None) -> list[Entry]:
    """What the dedup and conflict checks must look at: all of ``entries``, or the index's
    candidates among them (a superset of every entry either check can accept)."""
    return entries if index is None else index.candidates(entries, entry, threshold)


def _visible(entries: list[Entry], entry_id: str | None, project_key: str | None) -> Entry | None:
    return next((e for e in entries if e.id == entry_id and is_visible_in_project(e, project_key)), None)


def _put_new(entries: list[Entry], entry: Entry) -> Entry:
    """Append ``entry`` under an id no other entry holds: its own (``content_id``), else the next of
    its series; returns it as stored. Another entry holds the id only when it is an older random id
    or a hash collision, never a duplicate (the callers checked for those): that entry is kept."""
    ids = set(map(attrgetter("id"), entries))  # in C: the list can hold 10,000 entries
    attempt = 0
    while entry.id in ids:
        attempt += 1
        entry = with_next_id(entry, attempt)
    entries.append(entry)
    return entry


def _put(entries: list[Entry], entry: Entry) -> None:
    """Same id: replaced where it stood (reference j.4.1); a new id goes last."""
    ids = list(map(attrgetter("id"), entries))  # in C: the list can hold 10,000 entries
    if entry.id in ids:
        entries[ids.index(entry.id)] = entry
    else:
        entries.append(entry)
