"""Budgets and the runaway guard of one turn (reference s.3), derived from the turn's messages.

Both are replayed from the messages since the turn's user message rather than kept as state:
nothing extra to checkpoint, and a resumed or compacted session can never disagree with them.
Only the last few responses can change a verdict (a stagnation window, a streak crossing 3),
so the hashing and JSON work is bounded; the rest is a count over the turn's messages.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from paicli.nodes.guards.budget import AgentBudget, BudgetStatus, Reminder, RunawayGuard, IterationResult
from paicli.memory.context.outcome import is_decided
from paicli.memory.context.rounds import BUDGET_FINALIZATION, RUNAWAY_REMINDER, internal, internal_kind
from paicli.prompts import PromptSources, load_resource, render
from paicli.tools.boundary import unwrap

RUNAWAY_NOTICE = "  ↻ 检测到重复的工具调用，已提醒模型换个思路"  # reference s.2
FINALIZATION_NOTICE = "⚠️ 执行预算已触发，正在整理部分结果"  # reference s.3
REMINDER_FILES = {Reminder.EXACT_ACTION_REPEAT: "runtime/runaway-exact-repeat.md",
                  Reminder.SAME_ERROR_FAMILY: "runtime/runaway-same-error.md"}


@lru_cache(maxsize=8)
def _template(relpath: str) -> str:
    return load_resource(relpath, PromptSources())


def current_turn(messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """The messages after the last real user message (internal ones do not start a turn)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage) and internal_kind(messages[index]) is None:
            return messages[index + 1:]
    return messages


def budget_of(turn: Sequence[BaseMessage], options: Any) -> AgentBudget:
    budget = AgentBudget(options.token_budget, options.stagnation_window, options.hard_max_iterations)
    responses = [m for m in turn if isinstance(m, AIMessage)]
    usages = [m.usage_metadata or {} for m in responses]
    budget.record_usage(sum(u.get("input_tokens", 0) or 0 for u in usages), sum(u.get("output_tokens", 0) or 0 for u in usages))
    budget.iteration = len(responses)
    # Stagnation looks at the last W responses only; a response without calls resets it anyway.
    for message in responses[-options.stagnation_window:]:
        budget.record_response(message.tool_calls)
    return budget


def exceeded(turn: Sequence[BaseMessage], options: Any) -> str | None:
    """The reason to finalize now, or None. A finalized turn is never finalized twice."""
    if _has_internal(turn, BUDGET_FINALIZATION):
        return None
    budget = budget_of(turn, options)
    status = budget.check()
    return None if status is BudgetStatus.WITHIN_BUDGET else budget.describe_exit(status)


def _has_internal(turn: Sequence[BaseMessage], kind: str) -> bool:
    """Whether the turn holds an internal message of ``kind``; only user-role messages can be one."""
    return any(internal_kind(m) == kind for m in turn if isinstance(m, HumanMessage))


def finalization_request(reason: str) -> HumanMessage:
    return internal(render(_template("runtime/budget-finalization.md"), {"reason": reason}).strip(),
                    BUDGET_FINALIZATION)


def _last_iterations(turn: Sequence[BaseMessage], count: int) -> list[list[IterationResult]]:
    """The results of the last ``count`` responses that called tools, oldest first."""
    start = len(turn)
    for _ in range(count):
        start = next((i for i in range(start - 1, -1, -1) if isinstance(turn[i], AIMessage) and turn[i].tool_calls), 0)
    window = turn[start:]
    results = {m.tool_call_id: m for m in window if isinstance(m, ToolMessage)}
    iterations = []
    for message in window:
        if isinstance(message, AIMessage) and message.tool_calls:
            iteration = []
            for call in message.tool_calls:
                result = results.get(call["id"])
                if result is not None:
                    iteration.append(IterationResult(call["name"], call["args"], unwrap(str(result.content)),
                                                     result.status != "error", is_decided(result)))
            iterations.append(iteration)
    return iterations


def runaway_reminder(turn: Sequence[BaseMessage], remind_after: int) -> HumanMessage | None:
    """The reminder to append after the turn's last iteration, if it crossed a streak.

    Replaying the last ``remind_after`` iterations is enough: a streak that crossed earlier already
    produced this turn's one reminder, and a turn with a reminder gets no other."""
    if _has_internal(turn, RUNAWAY_REMINDER):
        return None
    guard, reminder = RunawayGuard(remind_after), None
    for iteration in _last_iterations(turn, remind_after):
        reminder = guard.observe(iteration)
    if reminder is None:
        return None
    text = render(_template(REMINDER_FILES[reminder]), {"count": str(remind_after)}).strip()
    return internal(text, RUNAWAY_REMINDER)
