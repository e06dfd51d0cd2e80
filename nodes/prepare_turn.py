"""prepare_turn: make the conversation safe to send before a new turn starts.

A turn cut short (Ctrl-C, a killed process, a new message sent while an approval was pending)
can leave tool calls without results. The next request would be refused with a 400, so each
unanswered call gets a "cancelled" result in place (``memory.context.pairing``). A turn needs a user
message to answer: input without one (an empty message list from Studio) is refused here,
before anything reaches the model or the ledger's view.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langchain_core.messages import RemoveMessage

from memory.context.pairing import repair_pairing
from nodes.support.run_errors import require_user_message
from nodes.support.state import AgentState


async def prepare_turn(state: AgentState) -> dict[str, Any]:
    require_user_message(state.get("messages") or [])
    repaired = repair_pairing(state.get("messages") or [])
    update: dict[str, Any] = {"error": None} if state.get("error") else {}
    if state.get("decisions"):
        update["decisions"] = {}
    if repaired is not None:
        update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired]
    return update
