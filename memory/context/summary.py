"""Tier 3a: summarise everything before the last N real user rounds (reference f).

The old part is rendered to text in 60,000-char chunks; one chunk is summarised directly, several
are summarised one by one (at most 8,000 chars each) and merged in order. The result must carry
the four headings, in order, after at most one repair. Any failure, or a summary that does not
make the history smaller, aborts: the history stays untouched. A lossy rewrite that lost the
plot is worse than no rewrite.

The model call is injected (``summarize(prompt_messages) -> str``, no tools bound), and so are
the prompt texts, which live in ``prompts/compaction/*.md`` (memory/ does not import prompts/).
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from paicli.memory.context.rounds import (MAX_SUMMARY_INPUT_CHARS, NOT_SUMMARISED, clean_splits, internal_kind, rebuild,
                           render_chunks, system_end, user_indices)

log = logging.getLogger(__name__)

DEFAULT_RETAIN_ROUNDS = 3  # reference (f.1): automatic compaction keeps 3 user rounds
MANUAL_RETAIN_ROUNDS = 1  # reference (f.1): /compact keeps 1
MAX_PARTIAL_SUMMARY_CHARS = 8_000  # reference (f.1): chunk and merge summaries
SUMMARY_PREFIX = "[已压缩的历史对话摘要]\n"  # reference (f.3) step 7
HEADINGS = ("## 当前目标与成功条件", "## 用户要求与已确认决定", "## 已完成工作及证据", "## 未解决问题与下一步")  # (f.5)
CHUNK_CONCURRENCY = 4  # chunk summaries are independent; keep provider rate limits in mind

Summarize = Callable[[list[BaseMessage]], Awaitable[str]]
Estimate = Callable[[Sequence[BaseMessage]], int]


@dataclass(frozen=True)
class SummaryPrompts:
    """Rendered prompt texts (see the loader beside the compact node)."""

    system: str
    summary: Callable[[str], str]  # conversation -> prompt
    chunk: Callable[[int, int, str], str]  # (index, total, fragment) -> prompt
    merge: Callable[[str], str]  # ordered partial summaries -> prompt
    repair: Callable[[str], str]  # draft -> prompt


class Abort(enum.Enum):
    EMPTY_HISTORY = "empty history"
    BELOW_TRIGGER = "below the summary trigger"
    TOO_FEW_ROUNDS = "not enough real user rounds"
    NOTHING_TO_SUMMARISE = "nothing to summarise before the kept rounds"
    LLM_ERROR = "summary LLM call failed"
    EMPTY_SUMMARY = "summary is blank"
    BAD_PARTIAL = "a chunk or merge summary is blank or too long"
    NO_HEADINGS = "summary does not contain the required sections"
    NOT_SMALLER = "conversation summary did not reduce token usage"


class SummaryError(Exception):
    def __init__(self, reason: Abort):
        super().__init__(reason.value)
        self.reason = reason


@dataclass(frozen=True)
class SummaryResult:
    messages: list[BaseMessage] | None  # the rebuilt list, or None when aborted
    reason: Abort | None
    tokens_before: int = 0
    tokens_after: int = 0


def has_required_headings(text: str) -> bool:
    """The four headings, each on its own line, in order; anything may sit between them."""
    expected = 0
    for line in text.splitlines():
        if expected < len(HEADINGS) and line.strip() == HEADINGS[expected]:
            expected += 1
    return expected == len(HEADINGS)


async def _ask(summarize: Summarize, prompts: SummaryPrompts, prompt: str) -> str:
    try:
        reply = await summarize([SystemMessage(prompts.system), HumanMessage(prompt)])
    except Exception as exc:  # any provider failure aborts this compaction, never the turn
        log.warning("conversation summary LLM call failed; skip compaction: %s", exc)
        raise SummaryError(Abort.LLM_ERROR) from exc
    return reply if isinstance(reply, str) else str(reply or "")


def _bounded(text: str) -> str:
    if not text.strip() or len(text) > MAX_PARTIAL_SUMMARY_CHARS:
        raise SummaryError(Abort.BAD_PARTIAL)
    return text


async def ensure_structured(text: str, summarize: Summarize, prompts: SummaryPrompts) -> str:
    """reference (f.5): one repair attempt for a summary that lost its headings."""
    if not text.strip() or has_required_headings(text):
        return text
    repaired = await _ask(summarize, prompts, prompts.repair(text))
    if not has_required_headings(repaired):
        raise SummaryError(Abort.NO_HEADINGS)
    return repaired


async def _merge(partials: list[str], summarize: Summarize, prompts: SummaryPrompts) -> str:
    """Merge level by level, groups of at most 60,000 chars, until one summary is left."""
    while len(partials) > 1:
        groups: list[str] = []
        current = ""
        for k, partial in enumerate(partials, 1):
            item = f"\n--- 片段 {k} ---\n{partial}\n"
            if current and len(current) + len(item) > MAX_SUMMARY_INPUT_CHARS:
                groups.append(current)
                current = ""
            current += item
        groups.append(current)
        partials = [_bounded(await _ask(summarize, prompts, prompts.merge(g))) for g in groups]
    return partials[0]


async def summarise(old: Sequence[BaseMessage], summarize: Summarize, prompts: SummaryPrompts) -> str:
    """The structured summary of ``old``; raises SummaryError to abort."""
    chunks = render_chunks(old)
    if len(chunks) == 1:
        return await ensure_structured(await _ask(summarize, prompts, prompts.summary(chunks[0])), summarize, prompts)
    limiter = asyncio.Semaphore(CHUNK_CONCURRENCY)

    async def one(index: int, chunk: str) -> str:
        async with limiter:
            return _bounded(await _ask(summarize, prompts, prompts.chunk(index, len(chunks), chunk)))

    try:
        async with asyncio.TaskGroup() as group:  # the first failure cancels the other chunk calls
            tasks = [group.create_task(one(i, c)) for i, c in enumerate(chunks, 1)]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    partials = [task.result() for task in tasks]
    return await ensure_structured(await _merge(partials, summarize, prompts), summarize, prompts)


def choose_split(messages: Sequence[BaseMessage], retain_rounds: int) -> int | None:
    """The index of the real user message that starts the kept rounds, or None."""
    start = system_end(messages)
    users = user_indices(messages, start)
    keep = max(1, retain_rounds)
    if len(users) <= keep:
        log.info("compactIfNeeded skip: only %d user turns, < retain %d", len(users), keep)
        return None
    safe = clean_splits(messages)
    # Normally users[-keep] is a clean cut; in a damaged history keep more rather than cut a pair.
    return next((i for i in reversed(users[: len(users) - keep + 1]) if i > start and i in safe), None)


async def compact_full(messages: Sequence[BaseMessage], *, summarize: Summarize, prompts: SummaryPrompts,
                       estimate: Estimate, trigger: int = 0, force: bool = False,
                       retain_rounds: int = DEFAULT_RETAIN_ROUNDS, prefix: str = SUMMARY_PREFIX) -> SummaryResult:
    """reference (f.3). ``estimate`` must count what the trigger counts (system, schema: Q1)."""
    if not messages:
        return SummaryResult(None, Abort.EMPTY_HISTORY)
    before = estimate(messages)
    if not force and before < trigger:
        return SummaryResult(None, Abort.BELOW_TRIGGER, before, before)
    split = choose_split(messages, retain_rounds)
    if split is None:
        return SummaryResult(None, Abort.TOO_FEW_ROUNDS, before, before)
    old = [m for m in messages[system_end(messages):split] if internal_kind(m) not in NOT_SUMMARISED]
    if not old:
        return SummaryResult(None, Abort.NOTHING_TO_SUMMARISE, before, before)
    try:
        text = await summarise(old, summarize, prompts)
    except SummaryError as exc:
        log.info("conversation summary aborted: %s", exc.reason.value)
        return SummaryResult(None, exc.reason, before, before)
    if not text.strip():
        return SummaryResult(None, Abort.EMPTY_SUMMARY, before, before)
    rebuilt = rebuild(messages, split, prefix + text.strip())
    after = estimate(rebuilt)
    if after >= before:
        log.info("conversation summary did not reduce token usage: %d -> %d", before, after)
        return SummaryResult(None, Abort.NOT_SMALLER, before, after)
    return SummaryResult(rebuilt, None, before, after)
