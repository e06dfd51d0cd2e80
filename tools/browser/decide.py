"""The browser's part of deciding one call (paicli issue 40), after the turn policy and the
guards and before the approval level (``paicli.nodes.core.policy.decide``):

- in shared mode, a call that would change a page the user had open, or any sensitive page,
  is refused (``🛡️ 策略拒绝: …``, nobody is asked: no approval lifts it);
- ``browser_connect`` asks the person at every level, ``--yes`` included, and "approve all"
  never covers it: only a typed ``y`` hands the agent the user's own Chrome;
- a screenshot or snapshot of a sensitive page is asked the same way, every time.

None: the approval level decides, as for any MCP tool (they ask).
"""

from __future__ import annotations

from typing import Any

from paicli.tools.browser.intent import BrowserTurn
from paicli.tools.browser.names import action_of
from paicli.tools.browser.rules import BrowserView, page_question, page_refusal
from paicli.tools.policy.decision import Ask, Decision, Deny
from paicli.tools.policy.preflight import REFUSED
from paicli.tools.facts import ToolFacts

HIGH_RISK = "🔴 高危"  # a typed y approves it, Enter does not (paicli.ui.approve)


def browser_decision(turn: BrowserTurn, view: BrowserView, name: str, args: Any,
                     facts: ToolFacts) -> Decision | None:
    """``facts``: the call's (``paicli.tools.call.Call``)."""
    args = args if isinstance(args, dict) else {}
    refused = page_refusal(turn, view, name, args)
    if refused is not None:
        return Deny(REFUSED.format(refused), "policy", refused)
    if action_of(name) == "connect" and facts.approval == "always":
        return Ask(name, args, facts.danger, facts.risk, facts.notice)
    notice = page_question(view, name, args)
    if notice is not None:
        return Ask(name, args, HIGH_RISK, facts.risk, notice)
    return None
