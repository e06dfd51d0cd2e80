"""Which project files the current turn read or wrote (Q13, docs/behavior.md#decisions).

A memory saved in a turn is linked to these files (``source_files`` metadata); when one of
them changes after the memory was last verified, the memory is marked possibly stale.
Only calls that succeeded count, and only paths that stay inside the project.
"""

from __future__ import annotations

import posixpath
from typing import Any, Mapping

from langchain_core.messages import AIMessage, ToolMessage

from paicli.nodes.guards.turn import current_turn
from paicli.tools.base import ToolSpec
from paicli.tools.call import facts_for

MAX_SOURCE_FILES = 8  # keeps the metadata line short; the first files of the turn win


def turn_files(messages: list[Any], tools: Mapping[str, ToolSpec]) -> tuple[str, ...]:
    """The files the turn's successful calls of a ``turn_file`` tool of ``tools`` (the run's table) named."""
    turn = current_turn(messages)
    failed = {m.tool_call_id for m in turn if isinstance(m, ToolMessage) and m.status == "error"}
    answered = {m.tool_call_id for m in turn if isinstance(m, ToolMessage)}
    found: dict[str, None] = {}
    for message in turn:
        for call in message.tool_calls if isinstance(message, AIMessage) else ():
            path = project_relative(path_of(call, tools))
            if path and call["id"] in answered and call["id"] not in failed:
                found.setdefault(path)
    return tuple(found)[:MAX_SOURCE_FILES]


def path_of(call: dict[str, Any], tools: Mapping[str, ToolSpec]) -> Any:
    """The path a call of a ``turn_file`` tool (read_file, write_file, edit_file) names, else None."""
    facts = facts_for(call.get("name"), tools)
    return call.get("args", {}).get(facts.path_arg) if facts.turn_file and facts.path_arg else None


def project_relative(path: Any) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    normal = posixpath.normpath(path.strip().replace("\\", "/"))
    if normal.startswith(("/", "../")) or normal in ("..", ".") or "," in normal:
        return None  # outside the project (the guard refused it anyway), or unstorable
    return normal
