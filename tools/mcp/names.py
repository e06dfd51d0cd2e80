"""MCP tool names: ``mcp__<server>__<tool>`` (reference t), and the server a name belongs to.

Provider APIs accept function names of ``[A-Za-z0-9_-]`` up to 64 characters, so every other
character becomes ``_`` (the boundary's rule, reference r, minus ``.`` and ``:``, which those
APIs refuse). A server name never holds ``__`` (the configuration refuses it), so the server
of a tool name is the part between the first two separators.
"""

from __future__ import annotations

import re

PREFIX = "mcp__"
MAX_NAME = 64  # OpenAI-compatible function names
SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a server, or None."""
    if not SERVER_NAME.fullmatch(name) or "__" in name:
        return "名称只能包含字母、数字、_ 和 -（不能以符号开头，也不能含连续两个 _）"
    if len(name) > 32:
        return "名称不能超过 32 个字符"
    return None


def tool_name(server: str, tool: str) -> str:
    """The name the model sees; cut to 64 characters."""
    return (PREFIX + server + "__" + _UNSAFE.sub("_", tool or "tool"))[:MAX_NAME]


def is_mcp(name: str | None) -> bool:
    return (name or "").strip().lower().startswith(PREFIX)


def server_of(name: str | None) -> str | None:
    """``mcp__demo__echo`` -> ``demo``; None for a tool that is not an MCP tool."""
    if not is_mcp(name):
        return None
    server, sep, _ = (name or "").strip()[len(PREFIX):].partition("__")
    return server if sep and server else None
