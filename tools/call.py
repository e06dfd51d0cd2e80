"""One tool call as one value (paicli issue 36): what the model asked for and the tool it names.

``calls_of`` builds them where the model's answer is read (``call_model`` deciding its calls, the
gate, execution), from the run's own tool table (``Deps.tools``): the spec and its facts travel
with the call, so the turn policy, the guards, the approval level, the auto reviewer, execution,
the external-content record and the audit read ``call.facts`` and never look a tool up again by
name. A call naming no tool of the table gets the facts its name would have
(``paicli.tools.facts.facts_of``: an unknown ``mcp__`` name an MCP tool's, anything else a harmless
read), looked up here, once; the turn policy refuses such a call anyway (o.5: not advertised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from paicli.tools.base import ToolSpec
from paicli.tools.facts import ToolFacts, facts_of


@dataclass(frozen=True)
class Call:
    """A call of the assistant message: its id, the tool's name and the model's arguments, the
    tool's spec (None: not in the table) and facts."""

    id: str
    name: str
    args: Any  # the decoded arguments (a dict for every call call_model let through)
    spec: ToolSpec | None
    facts: ToolFacts


def call_of(tool_call: Mapping[str, Any], tools: Mapping[str, ToolSpec]) -> Call:
    name = tool_call.get("name") or ""
    spec = tools.get(name)
    facts = spec.facts if spec is not None and spec.facts is not None else facts_of(name)
    return Call(tool_call.get("id") or "", name, tool_call.get("args"), spec, facts)


def calls_of(message: Any, tools: Mapping[str, ToolSpec]) -> list[Call]:
    """The runnable calls of an assistant message (``tool_calls``; the invalid ones never run), in order."""
    return [call_of(c, tools) for c in getattr(message, "tool_calls", None) or ()]
