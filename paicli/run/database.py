"""``PAICLI_DATABASE_URL``: sessions in LangGraph's ``PostgresSaver``, long-term memory in its
``PostgresStore`` (issue 28; docs/architecture.md, "Persistence").

``open_database(url, project_key)`` connects (a bad or unreachable URL is one line naming the
setting, exit 2: never a silent fallback to the files), refuses a database whose tables a newer
paicli (a newer ``langgraph-checkpoint-postgres``) set up, and creates the tables on first use,
under an advisory lock (``SETUP_LOCK``), so several processes opening a fresh database at once
(CLI, Studio, a LangGraph server) migrate it one after another (issue 35).

The saver and the store share a ``psycopg_pool`` pool that checks each connection before handing
it out: a server restarted between two turns costs nothing but a reconnect; one that goes away
during a turn fails that call with ``psycopg.OperationalError``, which the front ends turn into one
line naming the database (``paicli.run.database_errors``), and the next call reconnects.

``SessionSaver`` is ``PostgresSaver`` with what the CLI asks of its ledger besides checkpoints:
the async methods (the CLI streams graphs; the sync saver runs them on a worker thread), each
checkpoint stamped with the project it belongs to (``/resume`` lists this project's sessions),
the session list, and the turn lock: a session-level advisory lock per session, so a second
process on the same session waits for the turn in progress and then runs on top of it, or gives
up after ``PAICLI_SESSION_WAIT`` seconds with one line (``SessionBusy``), as with the ledger.
"""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from langchain_core.messages import HumanMessage
from psycopg_pool import ConnectionPool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from paicli.memory.errors import PaicliError
from paicli.memory.ledger.owner import wait_for_turn
from paicli.memory.longterm.config import MemoryOptions
from paicli.memory.longterm.manager import LongTermMemory
from paicli.memory.longterm.store_entries import memory_of
from paicli.run.database_errors import remember

SETTING = "PAICLI_DATABASE_URL"
PROJECT_KEY = "paicli_project"  # checkpoint metadata: the project key of the session
CONNECT_TIMEOUT = 5  # seconds
# The pool (issue 35): connections the saver, the store and the memory lock share. A call waits at
# most POOL_TIMEOUT for one (the database coming back), a reconnect is tried for as long; the next
# call tries again.
POOL_MAX = 6
POOL_TIMEOUT = 10.0
# The advisory lock around the set-up of a fresh database: LangGraph's migrations and paicli's
# table, for every process that opens it (the CLI's sync one here, a server's async one in
# ``paicli.studio.postgres``).
SETUP_LOCK = "paicli.setup"
# The ledger's non-message events (``/clear``'s ``history_clear``), one row each: paicli's own
# table, beside LangGraph's, created on first use like theirs.
EVENTS_TABLE = """CREATE TABLE IF NOT EXISTS paicli_session_events (
    sequence BIGSERIAL PRIMARY KEY,
    thread_id TEXT NOT NULL,
    project TEXT NOT NULL,
    event TEXT NOT NULL,
    mode TEXT NOT NULL,
    actor TEXT NOT NULL,
    source TEXT NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    created TIMESTAMPTZ NOT NULL DEFAULT now()
)"""


# psycopg and its pool report a connection they drop as a warning: without a handler Python would print it on
# stderr, beside the one line the front ends print (paicli.run.database_errors). ``--debug`` logs it.
logging.getLogger("psycopg").addHandler(logging.NullHandler())


class DatabaseError(PaicliError):
    """The database in PAICLI_DATABASE_URL cannot be used (exit 2: the user fixes the setting)."""


class SessionSaver(PostgresSaver):
    """``PostgresSaver`` plus the ledger's extras the CLI uses (see the module docstring)."""

    def __init__(self, conn: psycopg.Connection | ConnectionPool, url: str, project_key: str) -> None:
        super().__init__(conn)
        self.url, self.project_key = url, project_key

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return super().put(config, checkpoint, {**metadata, PROJECT_KEY: self.project_key}, new_versions)

    async def aget_tuple(self, config: Any) -> Any:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: Any, *, filter: dict[str, Any] | None = None, before: Any = None,
                    limit: int | None = None) -> AsyncIterator[Any]:
        for item in await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit))):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``PostgresSaver.prune`` (LangGraph's contract) on a worker thread: Studio's server prunes
        through the async method, and warns when a checkpointer has none (issue 35)."""
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    def setup(self) -> None:
        super().setup()
        with self._cursor() as cur:
            cur.execute(EVENTS_TABLE)

    def append_event(self, thread_id: str, event: str, *, mode: str | None = None, actor: str | None = None,
                     source: str = "", metadata: dict | None = None) -> int:
        """A non-message event (``history_clear``…), kept beside the checkpoints as the ledger keeps
        it among its lines (reference h.2); returns its sequence."""
        with self._cursor() as cur:
            row = cur.execute(
                "INSERT INTO paicli_session_events (thread_id, project, event, mode, actor, source, metadata) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING sequence",
                (thread_id, self.project_key, event, mode or "react", actor or "agent", source,
                 Jsonb(dict(metadata or {})))).fetchone()
        return int(row["sequence"])

    def import_event(self, thread_id: str, line: dict[str, Any]) -> bool:
        """A ledger's event line (``paicli db import``), at its own time; False when that event is
        here already (a second import), so importing twice copies it once."""
        with self._cursor() as cur:
            row = cur.execute(
                "INSERT INTO paicli_session_events (thread_id, project, event, mode, actor, source, metadata, created) "
                "SELECT %(t)s, %(p)s, %(e)s, %(m)s, %(a)s, %(s)s, %(d)s, to_timestamp(%(ms)s / 1000.0) "
                "WHERE NOT EXISTS (SELECT 1 FROM paicli_session_events WHERE thread_id = %(t)s AND event = %(e)s "
                "AND created = to_timestamp(%(ms)s / 1000.0)) RETURNING sequence",
                {"t": thread_id, "p": self.project_key, "e": line["event"], "m": line.get("mode") or "react",
                 "a": line.get("actor") or "agent", "s": line.get("source") or "", "d": Jsonb(dict(line.get("metadata") or {})),
                 "ms": int(line["timestamp"])}).fetchone()
        return row is not None

    def turn_lock(self, thread_id: str) -> AdvisoryTurnLock:
        return AdvisoryTurnLock(self.url, thread_id)

    def has_session(self, thread_id: str) -> bool:
        """Whether any checkpoint of this session is in the database (``--continue``)."""
        with self._cursor() as cur:
            return cur.execute("SELECT 1 FROM checkpoints WHERE thread_id = %s LIMIT 1", (thread_id,)).fetchone() is not None

    def sessions(self) -> list[dict[str, Any]]:
        """This project's sessions, newest first: ``{id, started, last_activity, mode, title, messages}``."""
        with self._cursor() as cur:
            rows = cur.execute(
                "SELECT thread_id, min(checkpoint->>'ts') AS started, max(checkpoint->>'ts') AS last "
                "FROM checkpoints WHERE metadata->>%s = %s GROUP BY thread_id ORDER BY last DESC LIMIT 100",
                (PROJECT_KEY, self.project_key)).fetchall()
        return [self._summary(row) for row in rows]

    summaries = sessions  # the name the ledger's SessionList gives it (Studio's registrar reads either)

    def _summary(self, row: dict[str, Any]) -> dict[str, Any]:
        found = self.get_tuple({"configurable": {"thread_id": row["thread_id"], "checkpoint_ns": ""}})
        messages = list((found.checkpoint["channel_values"].get("messages") or []) if found else [])
        return {"id": row["thread_id"], "started": _millis(row["started"]), "last_activity": _millis(row["last"]),
                "mode": "react", "title": self._title(row["thread_id"], messages), "messages": len(messages)}

    def _title(self, thread_id: str, messages: list[Any]) -> str:
        """The session's first request, as the ledger's list shows it: after ``/clear`` the view is
        empty, so it is read from the earliest versions of the conversation."""
        first = next((m for m in messages if isinstance(m, HumanMessage)), None)
        if first is None:
            with self._cursor() as cur:
                rows = cur.execute(
                    "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = '' "
                    "AND channel = 'messages' AND blob IS NOT NULL ORDER BY version LIMIT 3", (thread_id,)).fetchall()
            earliest = [m for r in rows for m in self.serde.loads_typed((r["type"], r["blob"]))]
            first = next((m for m in earliest if isinstance(m, HumanMessage)), None)
        return str(first.content).splitlines()[0][:60] if first is not None and first.content else ""


def _millis(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp).timestamp() * 1000)


class AdvisoryTurnLock:
    """One session's turn lock across machines: ``pg_try_advisory_lock`` on a connection of its own,
    held for the turn (a crashed holder's lock goes with its connection)."""

    def __init__(self, url: str, thread_id: str) -> None:
        self.url, self.session = url, thread_id
        self._conn: psycopg.Connection | None = None

    def _try(self) -> bool:
        if self._conn is None:
            self._conn = _connect(self.url)
        row = self._conn.execute("SELECT pg_try_advisory_lock(hashtext(%s)) AS got", (self._key,)).fetchone()
        return bool(row and row["got"])

    @property
    def _key(self) -> str:
        return f"paicli.run.session:{self.session}"

    async def acquire(self, wait: float, notice: Callable[[str], None]) -> None:
        try:
            await wait_for_turn(self.session, lambda: asyncio.to_thread(self._try), lambda: "另一个进程", wait, notice,
                                where="（数据库中的会话锁）")
        except BaseException:  # busy or cancelled: the lock's connection is not kept
            self.release()
            raise

    def release(self) -> None:
        if self._conn is not None:
            self._conn.close()  # the session-level lock ends with the connection
            self._conn = None


@dataclass
class Database:
    saver: SessionSaver
    store: PostgresStore
    pool: ConnectionPool | None = None

    def memory(self, options: MemoryOptions) -> LongTermMemory:
        return memory_of(self.store, options)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


CONNECTION_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
                     "connect_timeout": CONNECT_TIMEOUT}


def _connect(url: str) -> psycopg.Connection:
    return psycopg.Connection.connect(url, **CONNECTION_KWARGS)


def open_pool(url: str) -> ConnectionPool:
    """The pool the saver and the store share: a connection that sat idle is checked before it is
    handed out (a dead one is replaced), so a database restarted meanwhile, between two turns, is
    reconnected to, not failed on. Within a burst of calls (a step's checkpoint and writes, one
    memory write's lock, read and put) none is checked: each check is a round trip."""
    return ConnectionPool(url, min_size=1, max_size=POOL_MAX, kwargs=dict(CONNECTION_KWARGS),
                          check=_check_if_idle, reset=mark_returned, timeout=POOL_TIMEOUT,
                          reconnect_timeout=POOL_TIMEOUT, num_workers=2, name="paicli", open=True)


IDLE_CHECK = 1.0  # seconds a pooled connection may sit unused before it is checked again
_RETURNED = "_paicli_returned"


def mark_returned(conn: Any) -> None:
    setattr(conn, _RETURNED, time.monotonic())


def idle_too_long(conn: Any) -> bool:
    """Whether a pooled connection sat unused long enough to be checked before its next use."""
    return time.monotonic() - getattr(conn, _RETURNED, 0.0) >= IDLE_CHECK


def _check_if_idle(conn: psycopg.Connection) -> None:
    if idle_too_long(conn):
        ConnectionPool.check_connection(conn)


def open_database(url: str, project_key: str) -> Database:
    """Connect, check the schema, set up the tables (one process at a time); ``DatabaseError``
    naming the setting otherwise."""
    prepare(url, project_key)
    pool = open_pool(url)
    return Database(SessionSaver(pool, url, project_key), PostgresStore(pool), pool)


def prepare(url: str, project_key: str = "") -> None:
    """Connect once, refuse a newer schema and set up the tables (``set_up``); ``DatabaseError``
    naming the setting for a URL that does not parse or connect. Also what a server's async saver
    and store run first (``paicli.studio.postgres``)."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise DatabaseError(f"{SETTING} 必须是 postgresql://用户@主机:端口/数据库 形式的 URL")
    try:
        probe = _connect(url)
    except psycopg.ProgrammingError:  # a URL libpq cannot parse; its message would repeat the URL
        raise DatabaseError(f"{SETTING} 不是有效的 PostgreSQL 连接 URL（应为 postgresql://用户@主机:端口/数据库）") from None
    except psycopg.Error as error:
        reason = " ".join(str(error).replace(url, "<URL>").split())[:300]
        raise DatabaseError(f"{SETTING} 指向的数据库无法连接：{reason}") from None
    with probe:
        set_up(probe, url, project_key)
    remember(url)  # a failure later names this database (paicli.run.database_errors)


SETUP_POLL = 0.05  # seconds between two tries for SETUP_LOCK


def take_setup_lock(conn: psycopg.Connection) -> None:
    """``SETUP_LOCK``, tried until it is free rather than waited for in one statement: the store's
    migrations ``CREATE INDEX CONCURRENTLY``, which waits for every transaction in progress to
    end, and a ``pg_advisory_lock`` waiting for the lock is one: the two would deadlock."""
    while not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s)) AS got", (SETUP_LOCK,)).fetchone()["got"]:
        time.sleep(SETUP_POLL)


def set_up(conn: psycopg.Connection, url: str = "", project_key: str = "") -> None:
    """Refuse a newer schema, then LangGraph's migrations and paicli's table, holding
    ``SETUP_LOCK``: ``CREATE TABLE IF NOT EXISTS`` run by two sessions at once can fail on a
    fresh database (a unique violation in PostgreSQL's catalog), and the migration tables' rows
    would be inserted twice."""
    take_setup_lock(conn)
    try:
        _refuse_newer(conn, "checkpoint_migrations", len(PostgresSaver.MIGRATIONS))
        _refuse_newer(conn, "store_migrations", len(PostgresStore.MIGRATIONS))
        SessionSaver(conn, url, project_key).setup()
        PostgresStore(conn).setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (SETUP_LOCK,))


def _refuse_newer(conn: psycopg.Connection, table: str, known: int) -> None:
    """A database set up by a newer version has migrations this one does not know: refused."""
    if conn.execute("SELECT to_regclass(%s) AS t", (table,)).fetchone()["t"] is None:
        return
    row = conn.execute(f"SELECT max(v) AS v FROM {table}").fetchone()
    if row["v"] is not None and row["v"] >= known:
        raise DatabaseError(f"{SETTING} 的数据库表结构（{table} 版本 {row['v']}）比这个 paicli 认识的更新（最高 "
                            f"{known - 1}）：请升级 paicli 后再用这个数据库")


def project_key(root: Path) -> str:
    """With a database, the key that scopes project memory and lists sessions: the repository's
    ``origin`` remote, normalised (so every clone, on any machine, shares the project's memory),
    else the project path as without one (reference j.1)."""
    from paicli.memory.longterm.entry import normalize_project_key
    from paicli.tools.sandbox.own import child_environment, git  # issue 34 item 5: never a planted git, never the key

    try:
        found = subprocess.run([git(), "-C", str(root), "config", "--get", "remote.origin.url"],
                               capture_output=True, text=True, timeout=5, env=child_environment())
    except (OSError, subprocess.SubprocessError):
        return normalize_project_key(root)
    url = found.stdout.strip() if found.returncode == 0 else ""
    return normalized_remote(url) or normalize_project_key(root)


def normalized_remote(url: str) -> str:
    """``git@github.com:Org/App.git``, ``https://me@github.com/Org/App`` and
    ``ssh://git@github.com/Org/App.git/`` all become ``github.com/Org/App``; "" when not a remote URL."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.port and parts.scheme not in ("ssh", "git+ssh"):
            host = f"{host}:{parts.port}"
        path = parts.path
    elif re.fullmatch(r"[^/\s]+@[^/:\s]+:.+|[A-Za-z0-9.-]+\.[A-Za-z]{2,}:.+", url):  # scp-like syntax
        host, _, path = url.split("@", 1)[-1].partition(":")
        host = host.lower()
    else:
        return ""  # a local path: the project path serves as the key
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host}/{path}" if host and path else ""
