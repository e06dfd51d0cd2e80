"""The turn tool policy as the loop's nodes see it (reference o.2–o.5, v.4).

Everything is replayed from state, so there is nothing extra to checkpoint: the turn class
from the user's submitted text, the URLs this turn's ``web_search`` results grounded (their
``ToolMessage.artifact``), and the session's external sources (``state["external_sources"]``).
``decide_call`` puts the policy before approval: a call the policy denies is never shown to
the user for approval (v.4), it gets a ``🛡️ 工具调用已拒绝 [CODE]`` result instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage

from memory.context.rounds import internal_kind
from nodes.support.state import AgentState, Deps, RunContext
from nodes.guards.turn import current_turn
from tools.policy import approval
from tools.policy.protected_paths import protected_write
from tools.policy.turn import Deny, TurnClass, add_discovered, authorize, classify, expose


@dataclass(frozen=True)
class TurnView:
    turn: TurnClass
    discovered: frozenset[str]  # URLs this turn's web_search results returned (o.6)
    sources: tuple[str, ...]  # external content the session has read (o.1)
    advertised: frozenset[str]  # tool names exposed to the model for this call (o.4)


@dataclass(frozen=True)
class PolicyDenied:
    deny: Deny

    @property
    def text(self) -> str:
        return self.deny.text


def user_text(messages: list[Any]) -> str:
    """The text of the turn's real user message (internal reminders do not count)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and internal_kind(message) is None:
            return message.text if isinstance(message.text, str) else str(message.content)
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


def turn_view(state: AgentState, deps: Deps) -> TurnView:
    messages = list(state.get("messages") or [])
    turn, discovered = classify_turn(user_text(messages)), discovered_urls(messages)
    # A Plan task also trusts what its dependencies' web_search grounded (reference s.4; nodes.unit).
    discovered |= frozenset(state.get("trusted_urls") or ())
    tools = [(name, spec.description) for name, spec in deps.tools.items()]
    return TurnView(turn, discovered, tuple(state.get("external_sources") or ()),
                    frozenset(expose(turn, tools, discovered)))


def decide_call(view: TurnView, call: dict[str, Any], ctx: RunContext, approved: set[str],
                deps: Deps) -> approval.Decision | PolicyDenied:
    """The policy first (o.5), then the approval level (v.1), which protected paths raise."""
    verdict = authorize(view.turn, call.get("name"), call.get("args"), view.advertised, view.discovered,
                        view.sources, deps.external_guard)
    if isinstance(verdict, Deny):
        return PolicyDenied(verdict)
    protected = protected_write(call["name"], call["args"], ctx.project_root)
    return approval.decide(call["name"], call["args"], ctx.approval, approved, protected)
