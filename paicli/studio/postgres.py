"""LangGraph's own async saver and store on PostgreSQL, for a server run without Docker (issue 35).

``deploy/langgraph.json`` names ``paicli.studio.postgres:checkpointer`` and
``paicli.studio.postgres:store``: ``langgraph dev`` (langgraph-api's server with its in-memory
runtime, no Docker, no Redis) then keeps every thread's checkpoints in LangGraph's
``AsyncPostgresSaver`` and long-term memory in its ``AsyncPostgresStore``, in the database of
``PAICLI_DATABASE_URL``, the one the CLI uses: memory a thread saves is found by the next thread,
by a restarted server and by the CLI. docs/deploy.md says how to run it.

Each opens an ``AsyncConnectionPool`` whose connections are checked after sitting idle (a database
restarted meanwhile is reconnected to, as in the CLI: ``paicli.run.database.open_pool``), after setting
up a fresh database exactly as the CLI does, under the same advisory lock
(``paicli.run.database.prepare``), so a server and CLIs starting at once on an empty database do not
trip over each other's migrations. The graphs' memory writes through the async store take
paicli's memory lock on the store's event loop (``paicli.memory.longterm.store_entries``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from paicli.config.settings import load_settings

POOL_MAX = 8  # a server runs several threads' runs at once


@asynccontextmanager
async def checkpointer() -> AsyncIterator[Any]:
    """``AsyncPostgresSaver`` over a pool of its own (langgraph-api enters it once per event loop)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with _pool() as pool:
        yield AsyncPostgresSaver(pool)


@asynccontextmanager
async def store() -> AsyncIterator[Any]:
    """``AsyncPostgresStore`` over a pool of its own: the server's long-term memory."""
    from langgraph.store.postgres.aio import AsyncPostgresStore

    async with _pool() as pool:
        yield AsyncPostgresStore(pool)


@asynccontextmanager
async def _pool() -> AsyncIterator[Any]:
    from psycopg_pool import AsyncConnectionPool

    from paicli.run.database import CONNECTION_KWARGS, POOL_TIMEOUT, SETTING, DatabaseError, prepare

    settings = await asyncio.to_thread(load_settings)
    url = settings.database_url
    if not url:
        raise DatabaseError(f"{SETTING} 未设置：服务器的会话和记忆存放在它指向的 PostgreSQL 数据库（见 docs/deploy.md）")
    await asyncio.to_thread(prepare, url)  # one process at a time, as the CLI does
    pool = AsyncConnectionPool(url, min_size=1, max_size=POOL_MAX, kwargs=dict(CONNECTION_KWARGS),
                               check=_check_if_idle, reset=_returned, timeout=POOL_TIMEOUT,
                               reconnect_timeout=POOL_TIMEOUT, name="paicli-server", open=False)
    await pool.open(wait=True, timeout=POOL_TIMEOUT)
    try:
        yield pool
    finally:
        await pool.close()


async def _returned(conn: Any) -> None:
    from paicli.run.database import mark_returned

    mark_returned(conn)


async def _check_if_idle(conn: Any) -> None:
    from psycopg_pool import AsyncConnectionPool

    from paicli.run.database import idle_too_long

    if idle_too_long(conn):
        await AsyncConnectionPool.check_connection(conn)
