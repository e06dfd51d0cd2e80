"""Opening one MCP session, and the server's log file.

stdio servers run through the ``mcp`` SDK's ``stdio_client`` so their stderr goes to the
server's log (``/mcp logs``) instead of the user's terminal; the adapters' ``create_session``
offers no place for it. Streamable HTTP goes through ``langchain_mcp_adapters``' own
``create_session``. Both yield an initialised ``ClientSession`` for ``load_mcp_tools``.
A stdio server gets the SDK's default environment (no API keys of ours) plus its ``env``, and
runs in the project root, on the leash every process paicli starts is on (``tools/leash.py``,
issue 41): it ends when paicli does, also when paicli is killed with SIGKILL. Its command is looked
up on that environment's ``PATH`` first, in a worker thread, so a missing one fails with its name.
The libraries are imported here, on first use, never at start-up.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from paicli.tools.leash import leash_command
from paicli.tools.mcp.config import ServerConfig

LOG_TAIL = 40  # lines /mcp logs shows


@asynccontextmanager
async def open_session(config: ServerConfig, root: Path, errlog: TextIO) -> AsyncIterator[Any]:
    if config.transport == "stdio":
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import get_default_environment, stdio_client

        env = {**get_default_environment(), **dict(config.env)}
        found = await asyncio.to_thread(shutil.which, config.command, path=env.get("PATH"))
        if found is None:
            raise FileNotFoundError(f"找不到命令 {config.command}（PATH 中没有，也不是可执行文件的路径）")
        command, *args = leash_command([found, *config.args], os.getpid())
        params = StdioServerParameters(command=command, args=args, env=env, cwd=str(root))
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session
    else:
        from langchain_mcp_adapters.sessions import create_session

        connection = {"transport": "streamable_http", "url": config.url, "headers": dict(config.headers)}
        async with create_session(connection) as session:  # type: ignore[arg-type]
            await session.initialize()
            yield session


def describe_error(exc: BaseException) -> str:
    """One line for the first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ServerLog:
    """``<state dir>/logs/<server>.log``: the server's stderr and our start/stop lines."""

    def __init__(self, state_dir: Path | None, name: str):
        self.path = state_dir / "logs" / f"{name}.log" if state_dir else None

    def open(self) -> TextIO:
        if self.path is None:
            return open(os.devnull, "w", encoding="utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.path, "a", encoding="utf-8", errors="replace")

    def note(self, text: str) -> None:
        if self.path is None:
            return
        try:
            with self.open() as handle:
                handle.write(f"--- {datetime.now().isoformat(timespec='seconds')} {text}\n")
        except OSError:
            pass  # a log is best effort; the state line in /mcp still says what happened

    def tail(self, lines: int = LOG_TAIL) -> list[str]:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace") if self.path else ""
        except OSError:
            return []
        return text.splitlines()[-lines:]
