"""Long-term memory over any LangGraph store: paicli's rules, LangGraph's ``BaseStore`` API (issue 28).

``LongTermMemory`` works on a list of entries it reads (``read()``) and edits under a lock
(``mutate(fn)``); ``MemoryFile`` provides the two over ``long_term_memory.json``. ``StoreEntries``
provides them over a ``BaseStore`` (an ``InMemoryStore``, a ``PostgresStore``, LangGraph Server's
store): ``read`` lists the items under ``("memories", ...)`` (namespaces as ``paicli.memory.longterm.store``
defines them) and ``mutate`` runs ``fn`` (dedup, conflicts, staleness marks: ``paicli.memory.longterm.writes``)
on the freshest items, then writes back with ``PutOp``s only the entries ``fn`` added, changed or
removed. So the same rules hold over every store, and nothing but ``batch`` reaches the store.

Entries come back in the order they were written (their own ``timestamp``, then id): a store lists
items in an order of its own (``PostgresStore``: newest update first).

``mutate`` is a read-modify-write, so it holds a lock: one per store object in this process and,
for a PostgreSQL store, sync or async (LangGraph Server's ``AsyncPostgresStore``), a
transaction-independent advisory lock taken on a connection of the store's own, so every process
writing one database, the CLI's and the server's alike, serialises as two writing one memory file
do (issue 35). Beneath the lock, a fact's key is derived from what it says
(``paicli.memory.longterm.entry.content_id``): the same fact twice is one row whatever writes it.

A database store is personal (issue 35): its global memories are the user's (``owner``: the
``("memories", "user", <owner>)`` namespace), and other users' are never read. Global memories
written before that, in ``("memories", "global")``, are read as shared ones.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from itertools import compress
from datetime import UTC, datetime
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, Item, PutOp, SearchOp

from paicli.memory.longterm.config import MemoryOptions
from paicli.memory.longterm.entry import Entry, from_json
from paicli.memory.longterm.manager import LongTermMemory
from paicli.memory.longterm.store import ROOT, USER, MemoryStore, entry_value, namespace_of, user_namespace
from paicli.memory.longterm.write_index import WriteIndex

T = TypeVar("T")
PAGE = 1000  # items per search request while listing every memory
# The advisory lock's key: one lock for all of paicli's memory in a database (a mutation reads it all).
ADVISORY_KEY = "paicli.memory"


class StoreEntries:
    """``read`` and ``mutate`` (the ``MemoryFile`` interface) over a ``BaseStore``."""

    def __init__(self, store: BaseStore,
                 lock: Callable[[], AbstractContextManager[Any]] | None = None,
                 marker: Callable[[], Any] | None = None, owner: str | None = None,
                 thread_lock: Any = None) -> None:
        self.store = store
        # Whose global memories these are (a database store); None: one shared global namespace.
        self.owner = owner
        self._mine = user_namespace(owner) if owner else None
        # Per store, not per reader: two users' memories over one store (one connection) must not
        # hold the database lock at once, since a session-level advisory lock is re-entrant.
        self._thread_lock = thread_lock or threading.RLock()
        self._cross_process = lock or _no_lock
        # A cheap answer to "did anything change since the last read?" (for PostgreSQL: count and
        # latest update of the memory rows); None: every read lists every item.
        self._marker = marker
        self._last: tuple[Any, list[Entry]] | None = None
        # (namespace, key) -> (the item's updated_at, its entry): items unchanged since the last
        # read are not parsed again.
        self._parsed: dict[tuple[tuple[str, ...], str], tuple[Any, Entry]] = {}
        # The dedup / conflict index (``MemoryFile.write_index``): of ``_current``, the entries the
        # last read returned, updated with only what changed since ``_indexed``.
        self._current: list[Entry] = []
        self._indexed: list[Entry] = []
        self._index: WriteIndex | None = None

    def read(self) -> list[Entry]:
        with self._thread_lock:
            mark = self._marker() if self._marker is not None else None
            if mark is not None and self._last is not None and self._last[0] == mark:
                self._current = self._last[1]
                return list(self._last[1])
            entries = self._read_all()
            self._last = (mark, entries) if mark is not None else None
            self._current = entries
            return list(entries)

    def write_index(self) -> WriteIndex:
        """As ``MemoryFile.write_index``: inside a ``mutate`` function, the index of the list it
        was handed (before it edits it)."""
        with self._thread_lock:
            if self._index is None:
                self._index = WriteIndex(self._current)
            elif self._indexed is not self._current:
                self._index.update(self._indexed, self._current)
            self._indexed = self._current
            return self._index

    def _read_all(self) -> list[Entry]:
        now = datetime.now(UTC)
        entries, seen = [], set()
        for item in self._items():
            ident = (tuple(item.namespace), item.key)
            if ident[0][:2] == (ROOT, USER) and ident[0] != self._mine:
                continue  # another user's personal memory: never theirs to read here
            seen.add(ident)
            cached = self._parsed.get(ident)
            if cached is None or cached[0] != item.updated_at:
                entry = from_json({**item.value, "id": item.key}, now)
                if entry is None or namespace_of(entry) != ident[0]:
                    continue  # not a memory paicli can read where it lies: left as it is
                cached = self._parsed[ident] = (item.updated_at, entry)
            entries.append(cached[1])
        for gone in self._parsed.keys() - seen:
            del self._parsed[gone]
        return sorted(entries, key=_written)

    def _items(self) -> Iterator[Item]:
        offset = 0
        while True:
            [page] = self.store.batch([SearchOp((ROOT,), limit=PAGE, offset=offset)])
            yield from page
            if len(page) < PAGE:
                return
            offset += PAGE

    def mutate(self, fn: Callable[[list[Entry]], T]) -> T:
        """Run ``fn`` on the freshest entries (it edits the list in place) and store what changed."""
        with self._thread_lock, self._cross_process():
            before = self.read()
            entries = list(before)
            result = fn(entries)
            ops, added = _changes(before, entries)
            if ops:
                self.store.batch(ops)
                if self._marker is not None:  # under the lock no other writer came between: cache ours
                    if not _still_sorted(entries, added):
                        entries.sort(key=_written)
                    self._last = (self._marker(), entries)
                    self._current = self._last[1]
            return result


def changes(before: list[Entry], after: list[Entry]) -> list[PutOp]:
    """The puts that turn the items of ``before`` into those of ``after`` (entries are immutable:
    an edited entry is a new object)."""
    return _changes(before, after)[0]


def _changes(before: list[Entry], after: list[Entry]) -> tuple[list[PutOp], set[int]]:
    """``changes`` and the ``id()`` of every object of ``after`` that ``before`` lacks. A write
    changes one entry of thousands: which objects came and went is found with set operations on
    object ids (in C), and only those are looked at."""
    before_ids, after_ids = set(map(id, before)), set(map(id, after))
    came, went = after_ids - before_ids, before_ids - after_ids
    added = list(compress(after, map(came.__contains__, map(id, after))))
    removed = compress(before, map(went.__contains__, map(id, before)))
    where = {e.id: namespace_of(e) for e in added}
    ops = [PutOp(namespace_of(e), e.id, None) for e in removed if where.get(e.id) != namespace_of(e)]  # gone or moved
    ops += [PutOp(where[e.id], e.id, entry_value(e), index=False) for e in added]
    return ops, came


def _written(entry: Entry) -> tuple:
    return (entry.timestamp, entry.id)


def _still_sorted(entries: list[Entry], added: set[int]) -> bool:
    """Whether ``entries``, in written order before, still are with the objects of ``added`` where
    they stand (a new fact appended last, a refreshed one in its place): only their neighbours are
    compared."""
    if not added:
        return True
    for i in compress(range(len(entries)), map(added.__contains__, map(id, entries))):
        if (i > 0 and _written(entries[i - 1]) > _written(entries[i])) or \
                (i + 1 < len(entries) and _written(entries[i]) > _written(entries[i + 1])):
            return False
    return True


@contextmanager
def _no_lock() -> Iterator[None]:
    yield


def advisory_lock(store: BaseStore) -> Callable[[], AbstractContextManager[Any]] | None:
    """For a PostgreSQL store (its ``conn`` a psycopg connection or pool, sync or async): a
    session-level ``pg_advisory_lock`` held across the read and the writes. None for any other store.

    An async store's lock is taken on the store's own event loop (its ``loop``), from the worker
    thread ``mutate`` runs on, as the store's own sync methods do."""
    conn = getattr(store, "conn", None)
    if _sync_postgres(conn):
        @contextmanager
        def held() -> Iterator[None]:
            with _connection(conn) as connection:
                connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (ADVISORY_KEY,))
                try:
                    yield
                finally:
                    connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (ADVISORY_KEY,))

        return held
    loop = getattr(store, "loop", None)
    if not _async_postgres(conn) or not isinstance(loop, asyncio.AbstractEventLoop):
        return None

    @contextmanager
    def held_async() -> Iterator[None]:
        connection = _on_loop(loop, _take_async_lock(conn))
        try:
            yield
        finally:
            _on_loop(loop, _release_async_lock(conn, connection))

    return held_async


async def _take_async_lock(conn: Any) -> Any:
    connection = await conn.getconn() if _is_async_pool(conn) else conn
    try:
        await connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (ADVISORY_KEY,))
    except BaseException:
        if connection is not conn:
            await conn.putconn(connection)
        raise
    return connection


async def _release_async_lock(conn: Any, connection: Any) -> None:
    try:
        await connection.execute("SELECT pg_advisory_unlock(hashtext(%s))", (ADVISORY_KEY,))
    finally:
        if connection is not conn:  # a pool's: back to it (a broken one is discarded there)
            await conn.putconn(connection)


def _on_loop(loop: asyncio.AbstractEventLoop, coroutine: Any) -> Any:
    """Run ``coroutine`` on the store's loop and wait for it, from another thread."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coroutine.close()
        raise RuntimeError("an async store's memory is read and written off its event loop (asyncio.to_thread)")
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result()


MARKER_SQL = "SELECT count(*), max(updated_at) FROM store WHERE prefix = %s OR prefix LIKE %s"


def change_marker(store: BaseStore) -> Callable[[], Any] | None:
    """For a PostgreSQL store: the number of memory rows and their latest update, read before the
    items (so a change during a listing is seen on the next read)."""
    conn = getattr(store, "conn", None)
    if _sync_postgres(conn):
        def marker() -> Any:
            with _connection(conn) as connection:
                row = connection.execute(MARKER_SQL, (ROOT, ROOT + ".%")).fetchone()
            return tuple(row.values()) if isinstance(row, dict) else tuple(row)

        return marker
    loop = getattr(store, "loop", None)
    if not _async_postgres(conn) or not isinstance(loop, asyncio.AbstractEventLoop):
        return None

    async def read_marker() -> Any:
        if _is_async_pool(conn):
            async with conn.connection() as connection:
                row = await (await connection.execute(MARKER_SQL, (ROOT, ROOT + ".%"))).fetchone()
        else:
            row = await (await conn.execute(MARKER_SQL, (ROOT, ROOT + ".%"))).fetchone()
        return tuple(row.values()) if isinstance(row, dict) else tuple(row)

    return lambda: _on_loop(loop, read_marker())


def is_database_store(store: BaseStore) -> bool:
    """A PostgreSQL store, sync or async: "database mode", where global memory is personal."""
    return _sync_postgres(getattr(store, "conn", None)) or _async_postgres(getattr(store, "conn", None))


def _sync_postgres(conn: Any) -> bool:
    """A sync psycopg connection or pool. psycopg is never imported here: a process holding such a
    connection has imported it already, and one that has not pays nothing (``-p`` start-up)."""
    return _is_kind(conn, _SYNC_KINDS)


def _async_postgres(conn: Any) -> bool:
    return _is_kind(conn, _ASYNC_KINDS)


def _is_async_pool(conn: Any) -> bool:
    return _is_kind(conn, (("psycopg_pool", "AsyncConnectionPool"),))


def _is_kind(conn: Any, kinds: tuple[tuple[str, str], ...]) -> bool:
    found = tuple(getattr(sys.modules.get(module), name, None) for module, name in kinds)
    return any(kind is not None and isinstance(conn, kind) for kind in found)


_SYNC_KINDS = (("psycopg", "Connection"), ("psycopg_pool", "ConnectionPool"))
_ASYNC_KINDS = (("psycopg", "AsyncConnection"), ("psycopg_pool", "AsyncConnectionPool"))


@contextmanager
def _connection(conn: Any) -> Iterator[Any]:
    pool = getattr(sys.modules.get("psycopg_pool"), "ConnectionPool", None)
    if pool is not None and isinstance(conn, pool):  # a pool: the lock's own connection, kept until it is released
        with conn.connection() as connection:
            yield connection
    else:
        yield conn


_MEMORIES: dict[tuple[int, str | None], tuple[BaseStore, LongTermMemory]] = {}  # stores without a __dict__
_MEMORIES_GUARD = threading.Lock()
_ON_STORE = "_paicli_memories"  # {owner: LongTermMemory}, kept on the store: they go when it goes


def memory_of(store: BaseStore, options: MemoryOptions = MemoryOptions()) -> LongTermMemory:
    """The long-term memory a store holds: paicli's file store carries its own (``store.memory``,
    with the file's cross-process lock); any other store gets one ``LongTermMemory`` over
    ``StoreEntries``, the same object for every call with that store (and user) in this process
    (so its retriever's caches and search-term enricher live as long as the store). A database
    store's global memories are ``options.user``'s, else the OS user's."""
    own = getattr(store, "memory", None)
    if isinstance(own, LongTermMemory) or (own is not None and hasattr(own, "save_fact")):
        return own  # duck-typed too: `langgraph dev` imports the store module under another name
    owner = (options.user or os_user()) if is_database_store(store) else None
    with _MEMORIES_GUARD:
        kept = getattr(store, "__dict__", None)
        if kept is not None:
            memories = kept.setdefault(_ON_STORE, {})
            if owner not in memories:
                memories[owner] = _memory_over(store, options, owner)
            return memories[owner]
        found = _MEMORIES.get((id(store), owner))
        if found is None or found[0] is not store:
            found = _MEMORIES[(id(store), owner)] = (store, _memory_over(store, options, owner))
        return found[1]


def _memory_over(store: BaseStore, options: MemoryOptions, owner: str | None) -> LongTermMemory:
    kept = getattr(store, "__dict__", None)
    lock = kept.setdefault("_paicli_lock", threading.RLock()) if kept is not None else None
    entries = StoreEntries(store, advisory_lock(store), change_marker(store), owner=owner, thread_lock=lock)
    return LongTermMemory(None, options, entries=entries)


def os_user() -> str:
    """The OS user's name (issue 35's owner when ``PAICLI_USER`` is not set)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"


def store_of(memory: LongTermMemory) -> BaseStore:
    """The LangGraph store a graph is compiled with to reach ``memory``: the store it lives in,
    else paicli's file store over it."""
    if isinstance(memory.file, StoreEntries):
        return memory.file.store
    return MemoryStore(memory)
