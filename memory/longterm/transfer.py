"""Moving memories between the file and a database (``paicli db import|export``, issue 35).

Two things change on the way, and nothing else:
- **the project key**: the file keys a project memory by the project's path, a database by the
  project's ``origin`` remote when it has one (``paicli.run.database.project_key``); ``rekey`` moves
  entries from one key to the other, so a migrated memory is visible on the other side;
- **the owner** of a global memory: a database's are personal (``OWNER_KEY``), the file has no
  users.
``merge`` then adds what the target lacks: an entry whose id is there already, or that duplicates
one there (reference k), is counted as present. Run twice, it adds nothing the second time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from paicli.memory.longterm.dedup import canonicalize, find_duplicate, without_particles
from paicli.memory.longterm.entry import OWNER_KEY, SCOPE_GLOBAL, SCOPE_PROJECT, Entry


@dataclass
class Merged:
    added: list[Entry] = field(default_factory=list)
    present: int = 0


def with_metadata(entry: Entry, changes: Mapping[str, str | None]) -> Entry:
    """``entry`` with metadata keys set (or removed, for None), in its stored JSON too."""
    meta = {k: v for k, v in {**entry.metadata, **changes}.items() if v is not None}
    if dict(entry.metadata) == meta:
        return entry
    raw = entry.raw
    if raw is not None:
        stored = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        raw = {**raw, "metadata": {k: v for k, v in {**stored, **changes}.items() if v is not None}}
    return replace(entry, metadata=meta, raw=raw)


def rekey(entries: Iterable[Entry], keys: Mapping[str, str]) -> tuple[list[Entry], set[str]]:
    """The entries with each project key of ``keys`` replaced by its new key; and the ids moved."""
    out, moved = [], set()
    for entry in entries:
        new = keys.get(entry.project or "") if entry.scope == SCOPE_PROJECT else None
        if new and new != entry.project:
            entry = with_metadata(entry, {"project": new})
            moved.add(entry.id)
        out.append(entry)
    return out, moved


def owned_by(entries: Iterable[Entry], owner: str | None) -> list[Entry]:
    """Global entries given to ``owner`` (a database's user), or made ownerless (None: the file)."""
    return [with_metadata(e, {OWNER_KEY: owner}) if e.scope == SCOPE_GLOBAL else e for e in entries]


def merge(target: list[Entry], incoming: Iterable[Entry]) -> Merged:
    """Append to ``target`` (in place) each incoming entry it holds neither by id nor as a
    duplicate; an id held elsewhere in ``target`` counts as present (the same memory)."""
    ids = {e.id for e in target}
    same: dict[tuple, list[Entry]] = {}  # duplicates share the particle-free canonical (reference k)
    for entry in target:
        same.setdefault(_bucket(entry), []).append(entry)
    counts = Merged()
    for entry in incoming:
        bucket = same.setdefault(_bucket(entry), [])
        if entry.id in ids or find_duplicate(bucket, entry) is not None:
            counts.present += 1
            continue
        target.append(entry)
        ids.add(entry.id)
        bucket.append(entry)
        counts.added.append(entry)
    return counts


def _bucket(entry: Entry) -> tuple:
    return (entry.domain, without_particles(canonicalize(entry.content)))
