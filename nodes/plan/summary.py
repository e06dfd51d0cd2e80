"""summary: the run's final text (reference s.4 step 6), as the assistant's answer to the goal."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from paicli.nodes.plan.state import PlanState
from paicli.nodes.plan.text import DONE, final_text


async def summary(state: PlanState) -> dict[str, Any]:
    text = state.get("outcome") or final_text(state["plan"], list(state.get("failures") or []))
    status = state.get("status") or ("completed" if text.startswith(DONE) else "partial")
    return {"outcome": text, "status": status, "messages": [AIMessage(text)]}
