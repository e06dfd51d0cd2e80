"""Tier 3b: a session memory summarised in the background, ready when the trigger is hit (reference g).

Off by default (``PAICLI_SESSION_MEMORY_COMPACTION_ENABLED``). From 60% of the summary trigger
on, a background task summarises the history before the kept tail and refreshes it every 4,000
new tokens; when the trigger is reached the ready summary replaces that part at once, without
waiting on the model. A summary that is missing, stale, lacks the four headings (Q6) or does not
get the history under the trigger is not used: the full summary (f) runs instead.

State is kept per execution unit (the caller's ``unit`` key: thread plus task or agent), so
parallel Plan tasks and Team workers never share it; the kept tail is remembered by message id
because LangGraph may re-create message objects between steps.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from paicli.memory.context.rounds import NOT_SUMMARISED, clean_splits, internal_kind, rebuild, system_end, user_indices
from paicli.memory.context.summary import Estimate, Summarize, SummaryResult, has_required_headings
from paicli.memory.tokens import arguments_json, block_text

log = logging.getLogger(__name__)

PRECOMPUTE_RATIO = 0.60  # reference (g)
MIN_RETAIN_TOKENS = 10_000  # reference (g)
MIN_TEXT_MESSAGES = 5  # reference (g)
MAX_RETAIN_TOKENS = 40_000  # reference (g)
MIN_INCREMENTAL_UPDATE_TOKENS = 4_000  # reference (g)
SESSION_MEMORY_PREFIX = "[会话记忆摘要]\n"  # reference (f.6)
_ROLES = {"human": "USER", "ai": "ASSISTANT", "tool": "TOOL", "system": "SYSTEM"}


def enabled_from_text(text: str | None) -> bool:
    """reference (g): 1|true|yes|on enable it; anything else (or nothing) leaves it off."""
    return (text or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class SessionMemoryPrompts:
    system: str
    initial: Callable[[str], str]  # delta -> prompt
    update: Callable[[str, str], str]  # (current memory, delta) -> prompt


@dataclass
class _State:
    generation: int = 0
    summary: str | None = None
    first_kept_id: str | None = None
    pending: asyncio.Task | None = None


def render_delta(messages: Sequence[BaseMessage]) -> str:
    """reference (g) step 7: ``ROLE: content``, then ``TOOL_CALL name: args`` lines; no chunking."""
    parts = []
    for message in messages:
        if internal_kind(message) in NOT_SUMMARISED:
            continue
        content = message.content if isinstance(message.content, str) else "\n\n".join(map(block_text, message.content))
        parts.append(f"{_ROLES.get(message.type, message.type.upper())}: {content}")
        if isinstance(message, AIMessage):
            parts.extend(f"\nTOOL_CALL {c.get('name')}: {arguments_json(c.get('args') or '')}"
                         for c in [*message.tool_calls, *message.invalid_tool_calls])
        parts.append("\n\n")
    return "".join(parts)


def _has_text(message: BaseMessage) -> bool:
    if not isinstance(message, (HumanMessage, AIMessage)):
        return False
    content = message.content
    return bool(content.strip() if isinstance(content, str) else any(block_text(b).strip() for b in content))


def preserve_from(messages: Sequence[BaseMessage], count: Estimate) -> int:
    """reference (g) step 5: the earliest real user message whose tail stays within 40k tokens,
    stopping once the tail has 10k tokens and 5 text messages."""
    start = system_end(messages)
    users = user_indices(messages, start)
    if len(users) <= 1:
        return start
    chosen, tokens, texts, position = users[-1], 0, 0, len(messages)
    for candidate in reversed(users):
        tail = messages[candidate:position]  # walk backwards, adding one round at a time
        tokens, texts, position = tokens + count(tail), texts + sum(map(_has_text, tail)), candidate
        if tokens > MAX_RETAIN_TOKENS:
            break
        chosen = candidate
        if tokens >= MIN_RETAIN_TOKENS and texts >= MIN_TEXT_MESSAGES:
            break
    return max(start, chosen)


class SessionMemoryCompactor:
    def __init__(self, summarize: Summarize, prompts: SessionMemoryPrompts, *, enabled: bool = False):
        self.summarize = summarize
        self.prompts = prompts
        self.enabled = enabled
        self._states: dict[str, _State] = {}

    def prepare_if_needed(self, unit: str, messages: Sequence[BaseMessage], trigger: int, tokens: int,
                          count: Estimate) -> None:
        """Maybe start a background summary; ``tokens`` is the current full estimate."""
        if not messages or not self.would_prepare(trigger, tokens):
            return
        state = self._states.setdefault(unit, _State())
        if state.pending is not None and not state.pending.done():
            return
        covered, state = self._covered_until(unit, messages)
        keep = preserve_from(messages, count)
        if keep <= covered or not messages[keep].id:
            return
        delta = messages[covered:keep]
        if state.summary is not None and count(delta) < MIN_INCREMENTAL_UPDATE_TOKENS:
            return
        state.generation += 1
        job = self._summarise(state, state.generation, render_delta(delta), str(messages[keep].id))
        state.pending = asyncio.get_running_loop().create_task(job)

    def would_prepare(self, trigger: int, tokens: int) -> bool:
        """Whether an estimate of ``tokens`` is in the range where a background summary is made."""
        return self.enabled and trigger > 0 and math.floor(trigger * PRECOMPUTE_RATIO) <= tokens < trigger

    def _covered_until(self, unit: str, messages: Sequence[BaseMessage]) -> tuple[int, _State]:
        """Where the ready summary stops; a summary whose kept message is gone starts over."""
        state = self._states[unit]
        if state.summary is None:
            return system_end(messages), state
        index = _index_of(messages, state.first_kept_id)
        if index is not None:
            return index, state
        self.clear(unit)
        return system_end(messages), self._states.setdefault(unit, _State())

    async def _summarise(self, state: _State, generation: int, delta: str, first_kept_id: str) -> None:
        prompt = self.prompts.update(state.summary, delta) if state.summary else self.prompts.initial(delta)
        try:
            reply = await self.summarize([SystemMessage(self.prompts.system), HumanMessage(prompt)])
        except Exception as exc:  # the full summary stays available; log and move on
            log.warning("session memory summary failed: %s", exc)
            return
        text = (reply or "").strip()
        if generation != state.generation or not text:
            return
        if not has_required_headings(text):  # Q6: same check as the full summary
            log.info("session memory summary lacks the required sections; ignored")
            return
        state.summary, state.first_kept_id = text, first_kept_id

    def compact_if_ready(self, unit: str, messages: Sequence[BaseMessage], trigger: int,
                         estimate: Estimate) -> SummaryResult | None:
        state = self._states.get(unit)
        if not self.enabled or state is None or state.summary is None:
            return None
        index = _index_of(messages, state.first_kept_id)
        if index is None or index <= system_end(messages) or index not in clean_splits(messages):
            self.clear(unit)
            return None
        rebuilt = rebuild(messages, index, SESSION_MEMORY_PREFIX + state.summary)
        before, after = estimate(messages), estimate(rebuilt)
        if after >= before or after >= trigger:
            return None
        self.clear(unit)
        return SummaryResult(rebuilt, None, before, after)

    def clear(self, unit: str) -> None:
        """Drop the ready summary and cancel a pending job (/clear, /compact, after a full summary)."""
        state = self._states.pop(unit, None)
        if state and state.pending is not None and not state.pending.done():
            state.pending.cancel()

    def reset_all(self) -> None:
        """After a model switch (reference b): every summary was made for the old model."""
        for unit in list(self._states):
            self.clear(unit)

    async def wait(self, unit: str) -> None:
        state = self._states.get(unit)
        if state and state.pending is not None:
            await asyncio.gather(state.pending, return_exceptions=True)


def _index_of(messages: Sequence[BaseMessage], message_id: str | None) -> int | None:
    return next((i for i, m in enumerate(messages) if message_id and m.id == message_id), None)
