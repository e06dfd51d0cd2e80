"""gate_tools: ask the user about risky calls before anything runs.

``call_model`` decided each call once (``nodes.support.policy``); here each ``Ask`` becomes one
``interrupt()`` that the CLI or Studio answers with ``Command(resume=...)``, and the answer
replaces it in ``state["decisions"]``. A call the policy denied is never put to the user (v.4).
Nothing has run before the interrupts, so LangGraph re-running this node on resume is
harmless: earlier answers are replayed in order and only the next question is asked.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from nodes.support.policy import decide_now, read_turn, recorded
from nodes.support.state import AgentState, Deps, RunContext, run_context
from tools.policy.approval import Unclear, approval_key, approval_request, covered, read_answer
from tools.policy.decision import Allow, Ask, Decision, record


def last_ai(state: AgentState) -> AIMessage | None:
    messages = state.get("messages") or []
    return messages[-1] if messages and isinstance(messages[-1], AIMessage) else None


def needs_gate(state: AgentState) -> bool:
    """A question to ask, or a call without a recorded decision (the gate decides it)."""
    ai = last_ai(state)
    return ai is not None and not all(_settled(recorded(state, c["id"])) for c in ai.tool_calls)


def _settled(decision: Decision | None) -> bool:
    return decision is not None and not isinstance(decision, Ask)


def ask_user(ask: Ask, call_id: str) -> tuple[Decision, bool]:
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
        ai, approved = last_ai(state), set(state.get("approved_all") or ())
        decisions: dict[str, dict[str, Any]] = {}
        for call in ai.tool_calls if ai else []:
            decision = recorded(state, call["id"]) or await decide_now(call, read_turn(state, run_context(runtime), deps))
            if isinstance(decision, Ask) and covered(decision, approved):
                decision = Allow(decision.args)  # "approve all" given earlier in this step
            elif isinstance(decision, Ask):
                decision, approve_all = ask_user(decision, call["id"])
                if approve_all:
                    approved.add(approval_key(call["name"], call["args"]))
            decisions[call["id"]] = record(decision)
        return {"decisions": decisions, "approved_all": sorted(approved)}

    return gate_tools
