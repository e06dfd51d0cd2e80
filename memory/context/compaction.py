"""The compaction pipeline run before every model call (reference c.2), cheapest tier first.

1. Clear old tool results (tier 2) above the clearing trigger; stop if that got the history
   under the summary trigger.
2. Use a ready session-memory summary (tier 3b, when enabled).
3. Summarise all but the last 3 real user rounds (tier 3a).
If nothing works the call proceeds over the trigger; the history is never left half-rewritten.
Tier 1 (offloading) is not here: it runs when a tool result enters the history.

``force=True`` is the overflow recovery (Q3/Q4 in docs/behavior.md#decisions): clear every old result and
summarise regardless of the trigger, keeping 3 rounds, or 1 when 3 cannot shrink the history.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from paicli.memory.context.clearing import ToolResultClearer
from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.session_memory import SessionMemoryCompactor
from paicli.memory.context.summary import (DEFAULT_RETAIN_ROUNDS, MANUAL_RETAIN_ROUNDS, Abort, Estimate, Summarize,
                            SummaryError, SummaryResult, SummaryPrompts, compact_full)
from paicli.memory.tokens import Estimator

log = logging.getLogger(__name__)

# reference (c.3): user notices.
CLEARING_NOTICE = "🧹 上下文增长，已清理 {n} 条较早的工具结果（保留最近几条；需要时可重新调用工具或读回卸载文件）。"
SESSION_MEMORY_NOTICE = "📦 上下文接近窗口上限，已通过会话记忆摘要压缩后继续。"
FULL_SUMMARY_NOTICE = "📦 上下文接近窗口上限，已通过完整对话摘要压缩后继续。"
TASK_SUMMARY_TEXT = "上下文接近窗口上限，已把早期对话压缩为摘要后继续。"  # Plan: "📦 " + it; Team: "📦 [name] " + it
# Q4: when keeping 3 rounds cannot shrink the history, the overflow path keeps 1.
_RETRY_WITH_ONE_ROUND = (Abort.TOO_FEW_ROUNDS, Abort.NOT_SMALLER)
# /compact reports these as "nothing to compact"; any other abort is a failure it raises.
NOTHING_TO_COMPACT = (Abort.EMPTY_HISTORY, Abort.TOO_FEW_ROUNDS, Abort.NOTHING_TO_SUMMARISE)


class Strategy(str, enum.Enum):
    NONE = "none"
    TOOL_RESULT_CLEARING = "tool_result_clearing"
    SESSION_MEMORY = "session_memory"
    FULL_SUMMARY = "full_summary"


@dataclass(frozen=True)
class CompactionRecord:
    """One rewrite, as the session ledger stores it (reference c.3)."""

    strategy: Strategy
    manual: bool
    before_messages: int
    after_messages: int
    before_tokens: int
    after_tokens: int
    cleared_tool_results: int = 0

    def ledger_event(self, mode: str = "react") -> tuple[str, dict[str, Any]]:
        """(source, metadata) of the ``compaction`` ledger event for ReAct, Plan or Team."""
        if mode == "react":
            source = "manual" if self.manual else f"automatic:{self.strategy.value}"
            return source, {"beforeMessages": self.before_messages, "afterMessages": self.after_messages,
                            "beforeTokens": self.before_tokens, "afterTokens": self.after_tokens}
        metadata: dict[str, Any] = {"beforeMessages": self.before_messages, "afterMessages": self.after_messages,
                                    "strategy": self.strategy.value}
        if self.cleared_tool_results:
            metadata["clearedToolResults"] = self.cleared_tool_results
        return ("manual" if self.manual else "automatic"), metadata


@dataclass(frozen=True)
class CompactionResult:
    messages: list[BaseMessage]  # the whole new list
    strategy: Strategy  # the last tier that fired
    compacted: bool  # a summary replaced old rounds: new list, new ids for the summary pair
    cleared_tool_results: int
    record: CompactionRecord
    replaced: list[BaseMessage] = field(default_factory=list)  # clearing edits (same ids)

    @property
    def tokens_before(self) -> int:
        return self.record.before_tokens

    @property
    def tokens_after(self) -> int:
        return self.record.after_tokens

    def notices(self, mode: str = "react", agent: str | None = None) -> list[str]:
        """reference (c.3); Plan and Team announce summaries only."""
        if mode == "react":
            notes = [CLEARING_NOTICE.format(n=self.cleared_tool_results)] if self.cleared_tool_results else []
            if self.strategy is Strategy.SESSION_MEMORY:
                notes.append(SESSION_MEMORY_NOTICE)
            elif self.strategy is Strategy.FULL_SUMMARY:
                notes.append(FULL_SUMMARY_NOTICE)
            return notes
        if not self.compacted:
            return []
        return [f"📦 [{agent}] {TASK_SUMMARY_TEXT}" if mode == "team" and agent else f"📦 {TASK_SUMMARY_TEXT}"]


def _result(original: Sequence[BaseMessage], final: list[BaseMessage], strategy: Strategy, cleared: list[BaseMessage],
            before: int, after: int, manual: bool = False) -> CompactionResult:
    compacted = strategy in (Strategy.SESSION_MEMORY, Strategy.FULL_SUMMARY)
    record = CompactionRecord(strategy, manual, len(original), len(final), before, after, len(cleared))
    return CompactionResult(final, strategy, compacted, len(cleared), record, [] if compacted else cleared)


@dataclass
class Compactor:
    """The long-lived parts of the pipeline; build one per graph and share it across calls."""

    summarize: Summarize
    prompts: SummaryPrompts
    estimator: Estimator = field(default_factory=Estimator)
    clearer: ToolResultClearer = ToolResultClearer()
    session_memory: SessionMemoryCompactor | None = None

    async def compact_if_needed(self, messages: Sequence[BaseMessage], profile: ContextProfile, *,
                                unit: str = "default", tools_schema: Sequence[dict[str, Any]] | None = None,
                                system: str | None = None, force: bool = False) -> CompactionResult | None:
        """None when nothing changed (the usual case: one cached estimate and a comparison)."""
        if profile.compression_trigger_tokens <= 0 or not messages:
            return None
        try:
            return await self._run(messages, profile, self.estimator.measure(tools_schema, system), unit, force)
        except Exception:  # reference (c.2): a failed compaction must never fail the model call
            log.exception("conversationHistory compaction failed")
            return None

    async def compact_now(self, messages: Sequence[BaseMessage], *, unit: str = "default",
                          tools_schema: Sequence[dict[str, Any]] | None = None,
                          system: str | None = None) -> CompactionResult | None:
        """``/compact`` (reference c.2): a full summary now, keeping 1 user round; no clearing.
        None when there is nothing to compact; ``SummaryError`` when the summary failed."""
        if self.session_memory is not None:
            self.session_memory.clear(unit)
        outcome = await self._summary(messages, self.estimator.measure(tools_schema, system), 0, MANUAL_RETAIN_ROUNDS)
        if outcome.messages is None and outcome.reason not in NOTHING_TO_COMPACT:
            raise SummaryError(outcome.reason)  # the user asked: a failed summary is news, not "nothing to do"
        if outcome.messages is None:
            return None
        return _result(messages, outcome.messages, Strategy.FULL_SUMMARY, [], outcome.tokens_before,
                       outcome.tokens_after, manual=True)

    async def _run(self, messages: Sequence[BaseMessage], profile: ContextProfile, estimate: Estimate, unit: str,
                   force: bool) -> CompactionResult | None:
        # An assembly point: the reference's seven steps (c.2) read best as one sequence.
        trigger, memory = profile.compression_trigger_tokens, None if force else self.session_memory
        before = estimate(messages)
        if not force and before < self.floor(profile):
            return None
        current, edited = self._clear(messages, profile, before, force)
        tokens = estimate(current) if edited else before
        if memory is not None:
            memory.prepare_if_needed(unit, current, trigger, tokens, self.estimator.messages)
        if not force and tokens < trigger:
            return _result(messages, current, Strategy.TOOL_RESULT_CLEARING, edited, before, tokens) if edited else None
        ready = memory.compact_if_ready(unit, current, trigger, estimate) if memory is not None else None
        if ready is not None:
            return _result(messages, ready.messages, Strategy.SESSION_MEMORY, edited, before, ready.tokens_after)
        outcome = await self._summary(current, estimate, trigger, DEFAULT_RETAIN_ROUNDS, force)
        if outcome.messages is not None:
            if self.session_memory is not None:
                self.session_memory.clear(unit)
            return _result(messages, outcome.messages, Strategy.FULL_SUMMARY, edited, before, outcome.tokens_after)
        return _result(messages, current, Strategy.TOOL_RESULT_CLEARING, edited, before, tokens) if edited else None

    def would_act(self, messages: Sequence[BaseMessage], profile: ContextProfile, tokens: int) -> bool:
        """Whether ``compact_if_needed`` (not forced) would do anything for ``messages`` at an
        estimate of ``tokens``: clear a result, start or use a session memory, or try a summary.
        Over the clearing trigger with every old result already cleared, it would not: the
        router then skips the compact node (a superstep and a checkpoint)."""
        trigger = profile.compression_trigger_tokens
        if trigger <= 0 or not messages or tokens < self.floor(profile):
            return False
        if tokens >= trigger:
            return True
        if self.session_memory is not None and self.session_memory.would_prepare(trigger, tokens):
            return True
        return self.clearer.would_clear(messages, tokens, profile.tool_result_clearing_trigger)

    def floor(self, profile: ContextProfile) -> int:
        """Below this estimate no tier has anything to do."""
        if self.session_memory is not None and self.session_memory.enabled:
            return min(profile.tool_result_clearing_trigger, profile.session_memory_precompute_tokens)
        return profile.tool_result_clearing_trigger

    def _clear(self, messages: Sequence[BaseMessage], profile: ContextProfile, tokens: int,
               force: bool) -> tuple[list[BaseMessage], list[BaseMessage]]:
        """(the list after tier 2, the messages it edited); forced mode clears below the trigger too."""
        if force and self.clearer.enabled:
            cleared = self.clearer.clear(messages)
        else:
            cleared = self.clearer.clear_if_needed(messages, tokens, profile.tool_result_clearing_trigger)
        return (cleared.messages, cleared.replaced) if cleared else (list(messages), [])

    async def _summary(self, messages: Sequence[BaseMessage], estimate: Estimate, trigger: int, retain: int,
                       force: bool = True) -> SummaryResult:
        outcome = await compact_full(messages, summarize=self.summarize, prompts=self.prompts, estimate=estimate,
                                     trigger=trigger, force=force, retain_rounds=retain)
        if force and retain > MANUAL_RETAIN_ROUNDS and outcome.reason in _RETRY_WITH_ONE_ROUND:
            return await self._summary(messages, estimate, trigger, MANUAL_RETAIN_ROUNDS)
        return outcome


async def compact_if_needed(messages: Sequence[BaseMessage], profile: ContextProfile, estimator: Estimator, *,
                            summarize: Summarize, prompts: SummaryPrompts,
                            clearer: ToolResultClearer = ToolResultClearer(),
                            session_memory: SessionMemoryCompactor | None = None, unit: str = "default",
                            tools_schema: Sequence[dict[str, Any]] | None = None, system: str | None = None,
                            force: bool = False) -> CompactionResult | None:
    """The pipeline as one call; see ``Compactor``."""
    compactor = Compactor(summarize, prompts, estimator, clearer, session_memory)
    return await compactor.compact_if_needed(messages, profile, unit=unit, tools_schema=tools_schema,
                                             system=system, force=force)


async def compact_now(messages: Sequence[BaseMessage], estimator: Estimator, *, summarize: Summarize,
                      prompts: SummaryPrompts, session_memory: SessionMemoryCompactor | None = None,
                      unit: str = "default", tools_schema: Sequence[dict[str, Any]] | None = None,
                      system: str | None = None) -> CompactionResult | None:
    """``/compact`` as one call; see ``Compactor.compact_now``."""
    compactor = Compactor(summarize, prompts, estimator, session_memory=session_memory)
    return await compactor.compact_now(messages, unit=unit, tools_schema=tools_schema, system=system)
