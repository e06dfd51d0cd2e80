"""One tool call as one value (paicli issue 36): what the model asked for and the tool it names.

``calls_of`` builds them where the model's answer is read (``call_model`` deciding its calls, the
gate, execution), from the run's own tool table (``Deps.tools``): the spec and its facts travel
with the call, so the turn policy, the guards, the approval level, the auto reviewer, execution,
the external-content record and the audit read ``call.facts`` and never look a tool up again by
name. A call naming no tool of the table gets the facts its name would have (``facts_for``: an
``mcp__`` name an MCP tool's, anything else a harmless read); the turn policy refuses such a call
anyway (o.5: not advertised).

What has only a name (the front end's batch line, the turn's files, a cancelled question's audit
line) reads the run's table the same way, with ``facts_for``: there is no registry of tools by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from paicli.tools.base import ToolSpec
from paicli.tools.facts import DEFAULT, ToolFacts, mcp_default
from paicli.tools.mcp.names import is_mcp


@dataclass(frozen=True)
class Call:
    """A call of the assistant message: its id, the tool's name and the model's arguments, the
    tool's spec (None: not in the table) and facts."""

    id: str
    name: str
    args: Any  # the decoded arguments (a dict for every call call_model let through)
    spec: ToolSpec | None
    facts: ToolFacts


def facts_for(name: str | None, tools: Mapping[str, ToolSpec]) -> ToolFacts:
    """The facts of the tool called ``name`` in the run's table ``tools``; a name not in the table
    gets an MCP tool's for an ``mcp__`` name (``paicli.tools.facts.mcp_default``), else a harmless
    read's."""
    spec = tools.get(name or "")
    if spec is not None:
        return spec.facts
    return mcp_default(name or "") if is_mcp(name or "") else DEFAULT


def call_of(tool_call: Mapping[str, Any], tools: Mapping[str, ToolSpec]) -> Call:
    name = tool_call.get("name") or ""
    return Call(tool_call.get("id") or "", name, tool_call.get("args"), tools.get(name), facts_for(name, tools))


def calls_of(message: Any, tools: Mapping[str, ToolSpec]) -> list[Call]:
    """The runnable calls of an assistant message (``tool_calls``; the invalid ones never run), in order."""
    return [call_of(c, tools) for c in getattr(message, "tool_calls", None) or ()]
