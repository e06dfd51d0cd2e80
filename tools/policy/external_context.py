"""Which external content a session has read, for the long-term memory guard (reference o.1).

PaiCLI keeps one ExternalContextTracker per session. Here the recorded sources are a plain
tuple (an ordered set, at most ``MAX_RECORDED_SOURCES``) so the state can live in a LangGraph
channel and survive checkpoints; the functions below only compute new tuples. Reset the
tuple to ``()`` on ``/clear`` and nowhere else.

Any result of an external tool counts, success or failure: error text can carry remote
content too. Local tools (``read_file``, ``execute_command`` without curl/wget, ...) never do;
a command the model ran with ``network: true`` (issue 24) does, whatever it ran.
"""

from __future__ import annotations

from typing import Any

from paicli.tools.policy.classify import WEB_COMMAND, command_of, has_explicit_remember_intent
from paicli.tools.sandbox.flags import command_flags
from paicli.tools.facts import ToolFacts

MAX_RECORDED_SOURCES = 8  # reference o.1
WEB_COMMAND_SOURCE = "execute_command(curl/wget)"  # reference o.1
NETWORK_COMMAND_SOURCE = "execute_command(network)"  # issue 24: a command run with `network: true`
MCP_MENTION_SOURCE = "mcp_resource_mention"  # reference o.1, s.2 step 3: user input carried a resource

__all__ = ["MAX_RECORDED_SOURCES", "MCP_MENTION_SOURCE", "blocks_automatic_memory", "external_source",
           "has_explicit_remember_intent", "add_source"]


def external_source(name: str | None, args: Any, facts: ToolFacts) -> str | None:
    """The source a finished call of this tool records, or ``None`` for local tools: the tool's
    name when its ``external`` fact is set (MCP tools' and browser tools' are), or the command's
    kind. ``facts``: the call's (``paicli.tools.call.Call``)."""
    tool = (name or "").strip()
    if facts.external:
        return tool
    if facts.guard != "command":  # only a command's kind is a source (its ``command`` argument)
        return None
    if WEB_COMMAND.search(command_of(args, facts)):
        return WEB_COMMAND_SOURCE
    if command_flags(args).network:
        return NETWORK_COMMAND_SOURCE
    return None



def add_source(sources: tuple[str, ...], new: str | None) -> tuple[str, ...]:
    """Add a source to the ordered set; once it holds 8, later sources are dropped (as PaiCLI)."""
    source = (new or "").strip()
    if not source or source in sources or len(sources) >= MAX_RECORDED_SOURCES:
        return tuple(sources)
    return (*sources, source)


def blocks_automatic_memory(sources: tuple[str, ...], guard_on: bool = True) -> bool:
    """Auto extraction, the login-hint save and intent-less ``save_memory`` are off (o.1)."""
    return guard_on and bool(sources)

