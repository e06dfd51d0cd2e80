"""The checkpointer and store ``langgraph dev`` opens (named by the repository's langgraph.json
and the one ``paicli studio`` writes).

The server calls these with no arguments, so they read the user's settings the way the CLI
does, through ``load_settings``: the same ``PAICLI_HOME``, the same ``PAICLI_MEMORY_DIR`` (from
the environment or config.json; a project `.env` may not move it), the same memory options.
Studio and the CLI therefore always open the same ledger directory and the same memory file;
with ``PAICLI_DATABASE_URL``, the same database (``paicli.run.database``, issue 28).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from paicli.memory.ledger.saver import JsonlLedgerSaver
from paicli.memory.longterm.store import open_store
from paicli.config.settings import Settings, load_settings
from paicli.run.wiring import history_dir


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[Any]:
    """The session ledger. Built on a worker thread: creating its directory is a blocking call
    ``langgraph dev`` refuses on its event loop."""
    settings = await asyncio.to_thread(load_settings)
    if settings.database_url:
        yield (await asyncio.to_thread(_database, settings)).saver
        return
    yield await asyncio.to_thread(JsonlLedgerSaver, history_dir(settings))


@asynccontextmanager
async def make_store() -> AsyncIterator[Any]:
    """The long-term memory file, as a LangGraph store."""
    settings = await asyncio.to_thread(load_settings)
    if settings.database_url:
        yield (await asyncio.to_thread(_database, settings)).store
        return
    yield await asyncio.to_thread(open_store, settings.memory_dir, settings.memory.options)


_DATABASES: dict[str, Any] = {}


def _database(settings: Settings) -> Any:
    """One ``paicli.run.database.Database`` per URL in the server process (checkpointer and store share it)."""
    from paicli.run.database import open_database, project_key

    url = settings.database_url or ""
    if url not in _DATABASES:
        _DATABASES[url] = open_database(url, project_key(settings.project_root))
    return _DATABASES[url]
