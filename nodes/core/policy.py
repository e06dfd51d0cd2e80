"""The turn tool policy as the loop's nodes see it (reference o.2–o.5, v.4).

The ``DecisionContext`` is read from state, so it needs nothing checkpointed of its own: the turn class
from the user's submitted text, the URLs this turn's ``web_search`` results grounded (their
``ToolMessage.artifact``), and the session's external sources (``state["external_sources"]``).
``decide`` puts the policy before approval: a call the policy denies is never shown to
the user for approval (v.4), it gets a ``🛡️ 工具调用已拒绝 [CODE]`` result instead. The path
and command guards come next, also before any question (``paicli.tools.policy.preflight``; a departure
from v.4, where they run after it): a call they refuse is a ``🛡️ 策略拒绝: …`` denial.

One decision per call per iteration: ``call_model`` decides every call of its answer with the
``DecisionContext`` it was called with and puts the records in ``state["decisions"]``; the router and the
gate read them, the gate replaces each ``Ask`` with the user's answer, execution reads the result.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.context.rounds import internal_kind
from paicli.memory.tokens import text_of
from paicli.nodes.core.state import AgentState, Deps, RunContext
from paicli.nodes.guards.turn import current_turn
from paicli.tools.boundary import unwrap
from paicli.tools.browser import rules as browser_rules
from paicli.tools.browser.rules import BrowserState
from paicli.tools.policy import approval
from paicli.tools.policy.decision import Decision, Deny, from_record, to_record
from paicli.tools.policy.protected_paths import protected_write
from paicli.tools.policy.turn import (MEMORY_NEEDS_USER, TurnClass, add_discovered, authorize, classify, expose,
                               is_browser_tool, memory_question)
from paicli.tools.call import Call, facts_for


@dataclass(frozen=True)
class DecisionContext:
    """What deciding a call needs, read once per model call from the state and run context."""

    turn: TurnClass
    discovered: frozenset[str]  # URLs this turn's web_search results returned (o.6)
    sources: tuple[str, ...]  # external content the session has read (o.1)
    advertised: frozenset[str]  # tool names exposed to the model for this call (o.4)
    approval: str  # the approval level (v.1)
    approved_all: frozenset[str]  # tools the user chose "approve all" for (v.1)
    project_root: str
    external_guard: bool  # PAICLI_MEMORY_DISABLE_ON_EXTERNAL_CONTEXT
    allow_revert: bool = False  # PAICLI_ALLOW_REVERT=yes (paicli.tools.policy.approval)
    network_granted: bool = False  # PAICLI_SANDBOX_NETWORK=on: `network: true` asks for nothing more
    browser: BrowserState = BrowserState()  # the live browser and what this branch did in it (issue 40)
    # issue 34: the session's sandbox, asked (in decide, off the event loop) whether a network
    # command would share the host's network (no slirp4netns).
    sandbox: Any = None


def submitted_text(messages: list[Any]) -> str:
    """The text of the turn's real user message (internal reminders do not count)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and internal_kind(message) is None:
            return text_of(message)
    return ""


@lru_cache(maxsize=64)
def classify_turn(text: str) -> TurnClass:
    return classify(text)


def discovered_urls(messages: list[Any]) -> frozenset[str]:
    """o.6: only the typed URLs of successful web_search results, never URLs in prose."""
    found: frozenset[str] = frozenset()
    for message in current_turn(messages):
        artifact = message.artifact if isinstance(message, ToolMessage) else None
        if isinstance(artifact, dict) and artifact.get("discovered_urls"):
            found = add_discovered(found, message.status != "error", artifact["discovered_urls"])
    return found


def browser_state(messages: list[Any], deps: Deps) -> BrowserState:
    """The live browser (``deps.browser``), and what this branch's browser calls established in
    this turn (reference o.6: a page opened or selected, a page asking for a login), worked out
    from their results. Nothing to do when no browser tool is in the table (issue 40: the browser
    off costs a turn one look at the table)."""
    live = deps.browser
    state = BrowserState(view=live.view()) if live is not None else BrowserState()
    if live is None and not has_browser_tools(deps.tools):
        return state
    calls: dict[str, dict[str, Any]] = {}
    for message in current_turn(messages):
        if isinstance(message, AIMessage):
            calls.update({c["id"]: c for c in message.tool_calls if c.get("id")})
        elif isinstance(message, ToolMessage) and is_browser_tool(facts_for(message.name, deps.tools)):
            args = (calls.get(message.tool_call_id) or {}).get("args")
            state = browser_rules.observe(state, message.name or "", args, message.status != "error",
                                          unwrap(text_of(message)))
    return state


_LAST_TABLE: list[Any] = [None, False]  # the last tool table looked at, and whether it had a browser tool


def has_browser_tools(tools: dict[str, Any]) -> bool:
    """Whether the table holds a browser tool (a user's playwright server, say); the table is
    replaced, never changed, when servers come and go (``paicli.run.wiring``), so one look per table."""
    if _LAST_TABLE[0] is not tools:
        _LAST_TABLE[:] = [tools, any(is_browser_tool(spec.facts) for spec in tools.values())]
    return _LAST_TABLE[1]


def decision_context(state: AgentState, ctx: RunContext, deps: Deps) -> DecisionContext:
    messages = list(state.get("messages") or [])
    turn, discovered = classify_turn(submitted_text(messages)), discovered_urls(messages)
    # A Plan task also trusts what its dependencies' web_search grounded (reference s.4; paicli.nodes.unit).
    discovered |= frozenset(state.get("trusted_urls") or ())
    tools = [(name, spec.description, spec.facts) for name, spec in deps.tools.items()]
    browser = browser_state(messages, deps)
    return DecisionContext(turn, discovered, tuple(state.get("external_sources") or ()),
                frozenset(expose(turn, tools, discovered, browser)), ctx.approval,
                frozenset(state.get("approved_all") or ()), ctx.project_root, deps.external_guard,
                ctx.allow_revert, deps.sandbox.settings.network, browser, deps.sandbox)


def host_network(sandbox: Any, call: Call) -> bool:
    """A sandboxed network call would share the host's network (issue 34 item 8). Asked only
    for a network call: finding the sandbox may run a probe (a subprocess)."""
    from paicli.tools.sandbox.flags import command_flags

    if sandbox is None or call.facts.guard != "command" or not command_flags(call.args).network:
        return False
    return sandbox.why_outside() is None and sandbox.network_isolation() == "host"


def decide(call: Call, context: DecisionContext) -> Decision:
    """The one decision on a call, in this order: the turn policy (o.5); the path and command
    guards (item 6 of paicli issue 23); protected paths, which need a person after external
    content (item 5); the approval level (v.1). A refusal at any step is final and nobody is
    asked. Blocking when a guard applies (it reads the file system, ``blocking``): ``decide_iteration``
    then runs it in a thread. The guards (a shell parser and its rules) are imported by the first
    call decided (issue 30). Every step reads the call's facts (``paicli.tools.call.Call``)."""
    from paicli.tools.policy.preflight import REFUSED, guard_refusal

    name, args, facts = call.name, call.args, call.facts
    denial = authorize(context.turn, name, args, context.advertised, context.discovered, context.sources,
                       context.external_guard, context.browser, facts=facts)
    if denial is not None:
        return denial
    refused = guard_refusal(name, args, context.project_root, facts)
    if refused is not None:
        return Deny(REFUSED.format(refused), "policy", refused)
    if facts.web == "browser":  # issue 40: the user's own pages, sensitive pages, connecting
        from paicli.tools.browser.decide import browser_decision

        decided = browser_decision(context.turn.browser, context.browser.view, name, args, facts)
        if decided is not None:
            return decided
    if facts.memory and (memory := memory_question(context.turn, args, facts)) is not None:  # issue 34: memory from the user
        return approval.person_decides(name, args, context.approval, memory, MEMORY_NEEDS_USER, facts)
    protected = protected_write(name, args, context.project_root, facts)
    return approval.decide(name, args, context.approval, context.approved_all, protected, external=bool(context.sources),
                           allow_revert=context.allow_revert, network_granted=context.network_granted,
                           host_network=host_network(context.sandbox, call), facts=facts)


async def decide_now(call: Call, context: DecisionContext) -> Decision:
    """``decide`` off the event loop, for a call that has no recorded decision."""
    return await asyncio.to_thread(decide, call, context)


async def decide_iteration(calls: list[Call], context: DecisionContext) -> dict[str, dict[str, Any]]:
    """Every call of one assistant message, decided with the context the model was called with;
    the records travel in ``state["decisions"]`` to the gate and to execution. In a worker
    thread only when a call's decision reads the file system (``blocking``); otherwise here,
    which spares the common call a thread hop."""
    def decide_all() -> dict[str, dict[str, Any]]:
        return {call.id: to_record(decide(call, context)) for call in calls}

    return await asyncio.to_thread(decide_all) if any(map(blocking, calls)) else decide_all()


def blocking(call: Call) -> bool:
    """Whether deciding ``call`` touches the file system: only the path and command guards do
    (``paicli.tools.policy.preflight``: paths resolved, scripts read); the turn policy, protected paths
    (by text) and the approval level read the call and the context alone."""
    return call.facts.guard is not None


def recorded(state: AgentState, call_id: str) -> Decision | None:
    """The iteration's decision on a call; None if there is none (state edited in Studio, or a
    session saved by an older version), and the caller decides it then."""
    return from_record((state.get("decisions") or {}).get(call_id))
