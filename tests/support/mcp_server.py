"""A small MCP server written with the ``mcp`` SDK, for tests: ``python mcp_server.py [--http PORT]
[--marker FILE]``. ``--marker`` writes FILE at start, so a test can prove a server never ran.

Tools: ``echo`` (returns its text), ``slow`` (sleeps), ``crash`` (the process exits mid-call),
``broken`` (the tool reports an error).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

server = FastMCP("paicli-test", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
async def slow(seconds: float = 30.0) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    print("crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def broken() -> str:
    """Always fails."""
    raise RuntimeError("this tool is broken")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--marker", default="")
    args = parser.parse_args()
    if args.marker:
        Path(args.marker).write_text(str(os.getpid()), encoding="utf-8")
    print("test server started", file=sys.stderr, flush=True)
    if args.http:
        server.settings.host, server.settings.port = "127.0.0.1", args.http
        server.run(transport="streamable-http")
    else:
        server.run(transport="stdio")


if __name__ == "__main__":
    main()
