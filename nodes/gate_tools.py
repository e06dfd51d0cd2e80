"""gate_tools: ask the user about risky calls before anything runs.

Decisions come from the pure ``tools.approval.decide``; each ``Ask`` becomes one
``interrupt()`` that the CLI or Studio answers with ``Command(resume=...)``. Nothing has run
before the interrupts, so LangGraph re-running this node on resume is harmless: earlier
answers are replayed in order and only the next question is asked.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.state import AgentState, RunContext, run_context
from tools.approval import Allow, Ask, Decision, approval_request, decide, read_answer


def last_ai(state: AgentState) -> AIMessage | None:
    messages = state.get("messages") or []
    return messages[-1] if messages and isinstance(messages[-1], AIMessage) else None


def needs_gate(state: AgentState, ctx: RunContext) -> bool:
    ai = last_ai(state)
    approved = set(state.get("approved_all") or ())
    return bool(ai) and any(isinstance(decide(c["name"], c["args"], ctx.approval, approved), Ask) for c in ai.tool_calls)


def verdict(decision: Decision) -> dict[str, Any]:
    if isinstance(decision, Allow):
        return {"allow": True, "args": decision.args}
    return {"allow": False, "text": decision.text}


async def gate_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    ctx = run_context(runtime)
    ai = last_ai(state)
    approved = set(state.get("approved_all") or ())
    verdicts: dict[str, dict[str, Any]] = {}
    for call in ai.tool_calls if ai else []:
        decision = decide(call["name"], call["args"], ctx.approval, approved)
        if isinstance(decision, Ask):
            decision, approve_all = read_answer(interrupt(approval_request(decision, call["id"])), decision)
            if approve_all:
                approved.add(call["name"])
        verdicts[call["id"]] = verdict(decision)
    return {"verdicts": verdicts, "approved_all": sorted(approved)}
