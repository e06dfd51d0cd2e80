"""The checkpointer and store ``langgraph dev`` opens (named by the repository's langgraph.json
and the one ``paicli studio`` writes).

The server calls these with no arguments, so they read the user's settings the way the CLI
does, through ``load_settings``: the same ``PAICLI_HOME``, the same ``PAICLI_MEMORY_DIR`` (from
the environment or config.json; a project `.env` may not move it), the same memory options.
Studio and the CLI therefore always open the same ledger directory and the same memory file.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memory.ledger.saver import JsonlLedgerSaver
from memory.longterm.store import MemoryStore, open_store
from paicli.session import history_dir
from paicli.settings import load_settings


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[JsonlLedgerSaver]:
    """The session ledger. Built on a worker thread: creating its directory is a blocking call
    ``langgraph dev`` refuses on its event loop."""
    settings = await asyncio.to_thread(load_settings)
    yield await asyncio.to_thread(JsonlLedgerSaver, history_dir(settings))


@asynccontextmanager
async def make_store() -> AsyncIterator[MemoryStore]:
    """The long-term memory file, as a LangGraph store."""
    settings = await asyncio.to_thread(load_settings)
    yield await asyncio.to_thread(open_store, settings.memory_dir, settings.memory.options)
