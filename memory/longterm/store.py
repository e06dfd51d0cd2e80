"""A LangGraph store over ``long_term_memory.json`` (reference j; docs/architecture.md, "Persistence").

Items are PaiCLI memory entries; nothing else lives in the file, so only these namespaces exist:
- ``("memories", "global")`` for global entries;
- ``("memories", "project", <label>)`` for one project's entries, where the label is the
  project key (reference j.1) with ``%`` and ``.`` percent-encoded, since LangGraph forbids ``.``
  in namespace labels: ``/home/me/app.v2`` → ``/home/me/app%2Ev2``;
- ``("memories", "user", <label>)`` for one user's global entries in a database (issue 35: the
  entry's ``owner``, encoded the same way); the file never holds them.
The key is the entry id, and the value is the entry's JSON (j.1) without its id.

``put`` is PaiCLI's low-level ``store`` (j.4.1): the same id is replaced in place, and content
equivalent to another entry in the same scope (k) is not stored twice. The application's
explicit writes, with conflict detection, go through ``LongTermMemory`` (``store.memory``).
``search(query=...)`` ranks with the retriever; without a query, items come in file order.
Reads within a batch see the state before its puts, as with ``InMemoryStore``.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, Op,
                                  PutOp, Result, SearchItem, SearchOp, validate_op_namespace)

from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.entry import (OWNER_KEY, SCOPE_GLOBAL, SCOPE_PROJECT, Entry, format_instant, from_json,
                                   new_id, normalized, owner_of, to_json)
from paicli.memory.longterm.writes import store
from paicli.memory.longterm.store_filter import matches_filter, matches_namespace

ROOT = "memories"
GLOBAL_NS = (ROOT, SCOPE_GLOBAL)
USER = "user"  # ("memories", "user", <owner>): one user's global memories in a database (issue 35)


def project_label(project_key: str) -> str:
    return project_key.replace("%", "%25").replace(".", "%2E")


def project_key_of(label: str) -> str:
    return label.replace("%2E", ".").replace("%2e", ".").replace("%25", "%")


def namespace_of(entry: Entry) -> tuple[str, ...]:
    if entry.scope == SCOPE_GLOBAL:
        owner = owner_of(entry)
        return user_namespace(owner) if owner else GLOBAL_NS
    return (ROOT, SCOPE_PROJECT, project_label(entry.project)) if entry.project else (ROOT, SCOPE_PROJECT)


def project_namespace(project_key: str) -> tuple[str, ...]:
    return (ROOT, SCOPE_PROJECT, project_label(project_key))


def user_namespace(owner: str) -> tuple[str, ...]:
    return (ROOT, USER, project_label(owner))


class MemoryStore(BaseStore):
    def __init__(self, memory: LongTermMemory) -> None:
        self.memory = memory

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        entries = self.memory.entries()
        results: list[Result] = [self._read(op, entries) for op in ops]
        puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}  # last one wins
        if puts:
            self.memory.file.mutate(lambda current: _apply_puts(current, list(puts.values())))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # File locks, reads and os.replace block; `langgraph dev` refuses them on its event loop.
        return await asyncio.to_thread(self.batch, list(ops))

    def _read(self, op: Op, entries: list[Entry]) -> Result:
        if isinstance(op, GetOp):
            found = next((e for e in entries if e.id == op.key and namespace_of(e) == tuple(op.namespace)), None)
            return _item(found) if found else None
        if isinstance(op, SearchOp):
            return self._search(op, entries)
        if isinstance(op, ListNamespacesOp):
            return _list_namespaces(op, entries)
        return None

    def _search(self, op: SearchOp, entries: list[Entry]) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        inside = [e for e in entries if namespace_of(e)[:len(prefix)] == prefix]
        inside = [e for e in inside if not op.filter or matches_filter(entry_value(e), op.filter)]
        if op.query and op.query.strip():
            ranked = self.memory.retriever.rank_candidates(inside, op.query, limit=op.offset + op.limit)
            return [_item(s.entry, SearchItem, score=s.score) for s in ranked][op.offset:]
        return [_item(e, SearchItem) for e in inside[op.offset:op.offset + op.limit]]


def _apply_puts(entries: list[Entry], puts: list[PutOp]) -> None:
    now = datetime.now(UTC)
    for op in puts:
        if op.value is None:
            entries[:] = [e for e in entries if not (e.id == op.key and namespace_of(e) == tuple(op.namespace))]
        else:
            old = next((e for e in entries if e.id == op.key), None)
            store(entries, _entry_for(tuple(op.namespace), op.key, dict(op.value), old, now))


def _entry_for(namespace: tuple[str, ...], key: str, value: dict[str, Any], old: Entry | None,
               now: datetime) -> Entry:
    metadata = {str(k): str(v) for k, v in dict(value.get("metadata") or {}).items()}
    metadata.setdefault("source", "fact")
    metadata.pop("project", None)
    metadata.pop(OWNER_KEY, None)  # the namespace says whose it is
    if namespace == GLOBAL_NS:
        metadata["scope"] = SCOPE_GLOBAL
    elif len(namespace) == 3 and namespace[:2] == (ROOT, SCOPE_PROJECT):
        metadata.update(scope=SCOPE_PROJECT, project=project_key_of(namespace[2]))
    elif len(namespace) == 3 and namespace[:2] == (ROOT, USER):
        metadata.update({"scope": SCOPE_GLOBAL, OWNER_KEY: project_key_of(namespace[2])})
    else:
        raise InvalidNamespaceError(
            f"paicli's store holds memories only: use {GLOBAL_NS}, ('memories', 'project', <project>) or "
            f"('memories', 'user', <user>), not {namespace}")
    if not isinstance(value.get("content"), str) or not value["content"].strip():
        raise ValueError("a memory needs a non-empty string 'content'")
    raw = {"type": "FACT", **value, "id": key or new_id(), "metadata": metadata}
    raw.pop("tokenCount", None)  # re-estimated for the new content
    if old is not None:
        raw["timestamp"] = format_instant(old.timestamp)  # created_at survives an update
    if raw.get("lastVerifiedAt") is None:
        raw["lastVerifiedAt"] = format_instant(now)  # a put is a write: verified now
    entry = from_json(raw, now)  # a missing or null timestamp becomes now (reference j.1)
    if entry is None:
        raise ValueError(f"not a valid memory entry: {value!r}")
    return normalized(entry)  # PaiCLI's shape, with any other field of the value kept after it


def entry_value(entry: Entry) -> dict[str, Any]:
    """The item value of ``entry``: its JSON (j.1) without the id, which is the item's key."""
    value = to_json(entry)  # a copy; for an entry read from the file, every field it has
    value.pop("id", None)
    return value


def _item(entry: Entry, cls: type = Item, **extra: Any) -> Any:
    # A deep copy: the value may share nested objects with the entry's stored JSON (Entry.raw).
    return cls(namespace=namespace_of(entry), key=entry.id, value=copy.deepcopy(entry_value(entry)),
               created_at=entry.timestamp, updated_at=entry.last_verified_at or entry.timestamp, **extra)


def _list_namespaces(op: ListNamespacesOp, entries: list[Entry]) -> list[tuple[str, ...]]:
    found = {namespace_of(e) for e in entries}
    found = {ns for ns in found if all(matches_namespace(c.match_type, c.path, ns) for c in op.match_conditions or ())}
    if op.max_depth is not None:
        found = {ns[:op.max_depth] for ns in found}
    return sorted(found)[op.offset:op.offset + op.limit]


def open_store(directory: str | os.PathLike[str], options: MemoryOptions = MemoryOptions()) -> MemoryStore:
    return MemoryStore(LongTermMemory(directory, options))
