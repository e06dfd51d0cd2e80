"""gate_tools: ask the user about risky calls before anything runs.

``call_model`` decided each call once (``paicli.nodes.core.policy``); here each ``Ask`` becomes one
``interrupt()`` that the CLI or Studio answers with ``Command(resume=...)``, and the answer
replaces it in ``state["decisions"]``. A call the policy denied is never put to the user (v.4).
Nothing has run before the interrupts, so LangGraph re-running this node on resume is
harmless: earlier answers are replayed in order and only the next question is asked.

At the ``default`` level a command's ``Ask(review=True)`` goes to the auto reviewer first
(reference v.2), in a pass of its own that asks nobody: its verdicts are saved, and the loop
comes back here for what is left for the person (``graphs/loop.py``), so a resume never asks
the reviewer again. A denial goes back to the model; the third in a row in a turn goes to the
person (v.1).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from paicli.nodes.core.policy import decide_now, decision_context, recorded, submitted_text
from paicli.nodes.core.state import AgentState, Deps, RunContext, run_context
from paicli.tools.call import Call, calls_of
from paicli.tools.policy import auto_review
from paicli.tools.policy.approval import APPROVED_ALL, Unclear, approval_key, approval_request, covered, read_answer
from paicli.tools.policy.decision import Allow, Ask, Decision, Deny, to_record


def last_ai(state: AgentState) -> AIMessage | None:
    messages = state.get("messages") or []
    return messages[-1] if messages and isinstance(messages[-1], AIMessage) else None


def needs_gate(state: AgentState) -> bool:
    """A question to ask, or a call without a recorded decision (the gate decides it)."""
    ai = last_ai(state)
    return ai is not None and not all(_settled(recorded(state, c["id"])) for c in ai.tool_calls)


def _settled(decision: Decision | None) -> bool:
    return decision is not None and not isinstance(decision, Ask)


def ask_user(ask: Ask, call_id: str, change: dict[str, Any] | None = None) -> tuple[Decision, bool]:
    """One question, asked again (with what was wrong) until the answer is understood: under
    Studio a mistyped resume value must neither reject nor approve. Each repeat is one more
    ``interrupt`` of this node, replayed in order on the next resume like the others. A write
    or an edit carries the change it would make (``change``, issue 41)."""
    request = approval_request(ask, call_id)
    if change is not None:
        request["change"] = change
    while True:
        decision, approve_all = read_answer(interrupt(request), ask)
        if not isinstance(decision, Unclear):
            return decision, approve_all
        request = {**request, "problem": decision.problem}


async def auto_review_iteration(state: AgentState, calls: list[Call], decisions: dict[str, Decision],
                           deps: Deps) -> dict[str, Any] | None:
    """The reviewer's pass over the calls waiting for it; None when there are none (or no reviewer)."""
    waiting = [c for c in calls if isinstance(decisions[c.id], Ask) and decisions[c.id].review]
    if not waiting or deps.reviewer is None:
        return None
    notify, request = get_stream_writer(), submitted_text(list(state.get("messages") or []))
    denials = int(state.get("auto_denials") or 0)
    for call in waiting:
        ask = decisions[call.id]
        verdict = await deps.reviewer.review(request, ask.tool, ask.args)
        if verdict.allow:
            denials, decisions[call.id] = 0, Allow(ask.args, "auto")
            notify({"notice": auto_review.ALLOWED_LINE.format(tool=ask.tool, reason=verdict.reason)})
            continue
        denials += 1
        if denials >= auto_review.AUTO_ESCALATE_AFTER:  # the person decides this one
            denials = 0
            decisions[call.id] = replace(ask, review=False, notice=auto_review.ESCALATION_NOTE.format(reason=verdict.reason))
        else:
            decisions[call.id] = Deny(auto_review.DENIED_TEXT.format(reason=verdict.reason), "auto", verdict.reason)
            notify({"notice": auto_review.DENIED_LINE.format(tool=ask.tool, reason=verdict.reason)})
    return {"decisions": {k: to_record(v) for k, v in decisions.items()}, "auto_denials": denials}


def make_gate_tools(deps: Deps):
    async def gate_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ai, approved = last_ai(state), set(state.get("approved_all") or ())
        granted = deps.sandbox.settings.network  # PAICLI_SANDBOX_NETWORK=on: as decide_now's context
        calls = calls_of(ai, deps.tools)  # one value per call: its spec and facts (paicli.tools.call)
        made = {c.id: recorded(state, c.id) or await decide_now(c, decision_context(state, run_context(runtime), deps))
                for c in calls}
        reviewed = await auto_review_iteration(state, calls, made, deps)
        if reviewed is not None:
            return reviewed
        decisions: dict[str, dict[str, Any]] = {}
        for call in calls:
            decision = made[call.id]
            if isinstance(decision, Ask) and covered(decision, approved, granted, facts=call.facts):
                decision = Allow(decision.args, APPROVED_ALL)  # "approve all" given earlier in this iteration
            elif isinstance(decision, Ask):
                from paicli.tools.builtin.writing import change_preview  # its guards load with the first question

                # the file is read and diffed off the event loop (a server refuses blocking calls on it)
                change = await asyncio.to_thread(change_preview, call.facts.preview, decision.args,
                                                 Path(run_context(runtime).project_root))
                decision, approve_all = ask_user(decision, call.id, change)
                if approve_all:
                    approved.add(approval_key(call.name, call.args, granted, facts=call.facts))
            decisions[call.id] = to_record(decision)
        return {"decisions": decisions, "approved_all": sorted(approved)}

    return gate_tools
