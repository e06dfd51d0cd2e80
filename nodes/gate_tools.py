"""gate_tools: ask the user about risky calls before anything runs.

Each call is decided by the turn policy first and the approval level second
(``nodes.support.policy.decide_call``); each ``Ask`` becomes one ``interrupt()`` that the CLI or Studio
answers with ``Command(resume=...)``. A call the policy denies is never put to the user (v.4).
Nothing has run before the interrupts, so LangGraph re-running this node on resume is
harmless: earlier answers are replayed in order and only the next question is asked.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.support.policy import PolicyDenied, decide_call, turn_view
from nodes.support.state import AgentState, Deps, RunContext, run_context
from tools.policy.approval import Allow, Ask, Unclear, approval_request, read_answer


def last_ai(state: AgentState) -> AIMessage | None:
    messages = state.get("messages") or []
    return messages[-1] if messages and isinstance(messages[-1], AIMessage) else None


def needs_gate(state: AgentState, ctx: RunContext, deps: Deps) -> bool:
    ai = last_ai(state)
    if not ai:
        return False
    view, approved = turn_view(state, deps), set(state.get("approved_all") or ())
    return any(isinstance(decide_call(view, c, ctx, approved, deps), Ask) for c in ai.tool_calls)


def verdict(decision: Any, approver: str = "none") -> dict[str, Any]:
    """What execute_tools does with a call; ``approver`` is for the audit log (v.7)."""
    if isinstance(decision, Allow):
        return {"allow": True, "args": decision.args, "approver": approver}
    if isinstance(decision, PolicyDenied):
        return {"allow": False, "text": decision.text, "approver": "policy", "reason": decision.deny.code}
    return {"allow": False, "text": decision.text, "approver": approver}


def ask_user(ask: Ask, call_id: str) -> tuple[Any, bool]:
    """One question, asked again (with what was wrong) until the answer is understood: under
    Studio a mistyped resume value must neither reject nor approve. Each repeat is one more
    ``interrupt`` of this node, replayed in order on the next resume like the others."""
    request = approval_request(ask, call_id)
    while True:
        decision, approve_all = read_answer(interrupt(request), ask)
        if not isinstance(decision, Unclear):
            return decision, approve_all
        request = {**request, "problem": decision.problem}


def make_gate_tools(deps: Deps):
    async def gate_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, ai = run_context(runtime), last_ai(state)
        view, approved = turn_view(state, deps), set(state.get("approved_all") or ())
        verdicts: dict[str, dict[str, Any]] = {}
        for call in ai.tool_calls if ai else []:
            decision, approver = decide_call(view, call, ctx, approved, deps), "none"
            if isinstance(decision, Ask):
                decision, approve_all = ask_user(decision, call["id"])
                approver = "hitl"
                if approve_all:
                    approved.add(call["name"])
            verdicts[call["id"]] = verdict(decision, approver)
        return {"verdicts": verdicts, "approved_all": sorted(approved)}

    return gate_tools
