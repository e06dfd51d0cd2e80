"""A request on a running MCP server's session, as the modules that make one see it.

``Sessions`` is the one method they need of ``paicli.tools.mcp.servers.McpServers`` (a protocol, so
``resources`` and ``resource_tools`` do not import the servers' module, which imports them to
offer a server's resource tools); ``Unavailable`` is the answer of a server that cannot serve one
now.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Protocol


class Unavailable(Exception):
    """A server that cannot answer a session request now; the message says why and the fix."""


class Sessions(Protocol):
    async def on_session(self, server: str, request: Callable[[Any], Awaitable[Any]]) -> Any:
        """``request(session)`` on the server's live session; ``Unavailable`` when it cannot be run."""
        ...
