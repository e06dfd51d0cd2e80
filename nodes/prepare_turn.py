"""prepare_turn: make the conversation safe to send before a new turn starts.

A turn cut short (Ctrl-C, a killed process, a new message sent while an approval was pending)
can leave tool calls without results. The next request would be refused with a 400, so each
unanswered call gets a "cancelled" result in place (``paicli.memory.context.pairing``). A turn needs a user
message to answer: input without one (an empty message list from Studio) is refused here,
before anything reaches the model or the ledger's view.

A turn whose user message came with MCP resources it mentioned (an internal ``mcp_resource``
message, ``paicli.tools.mcp.mentions``) has read external content before the model even starts, so it
is recorded here as ``mcp_resource_mention`` (reference s.2 step 3, o.1).

Images of earlier turns are pruned here too (reference s.2 step 2, ``paicli.memory.context.images``):
each message that carried one keeps its text and a note saying how many were left out.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langchain_core.messages import RemoveMessage

from paicli.memory.context.images import pruned
from paicli.memory.context.pairing import repair_pairing
from paicli.memory.context.rounds import MCP_RESOURCE, internal_kind
from paicli.nodes.guards.turn import current_turn
from paicli.nodes.core.run_errors import require_user_message
from paicli.nodes.core.state import AgentState
from paicli.tools.policy.external_context import MCP_MENTION_SOURCE, add_source


async def prepare_turn(state: AgentState) -> dict[str, Any]:
    require_user_message(state.get("messages") or [])
    repaired = repair_pairing(state.get("messages") or [])
    update: dict[str, Any] = {"error": None} if state.get("error") else {}
    if state.get("decisions"):
        update["decisions"] = {}
    if state.get("auto_denials"):  # reference v.1: the count of auto denials is per user input
        update["auto_denials"] = 0
    messages = repaired if repaired is not None else list(state.get("messages") or [])
    turn_start = max(0, len(messages) - len(current_turn(messages)) - 1)  # the user's message of this turn
    old_images = pruned(messages, turn_start)  # reference s.2 step 2
    if repaired is not None:
        ids = {m.id: m for m in old_images}
        update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *(ids.get(m.id, m) for m in repaired)]
    elif old_images:
        update["messages"] = old_images
    if any(internal_kind(m) == MCP_RESOURCE for m in current_turn(state.get("messages") or [])):
        sources = tuple(state.get("external_sources") or ())
        if (after := add_source(sources, MCP_MENTION_SOURCE)) != sources:
            update["external_sources"] = list(after)
    return update
