"""A turn's relevant long-term memories as an internal message of that turn (issue 13).

The reference puts the memory block last in the system prompt (q.2 item 9) and rebuilds it every
turn, so a turn whose memories differ changes the request *before* the whole conversation and
the provider's prefix cache misses on all of it. Here the block rides with the turn instead: one
internal user message (kind ``memory_context``) right after the user's message, written once and
never edited, so every request extends the one before it.

- A memory line the visible conversation already carries is not injected again (``shown_lines``);
  after a compaction dropped it, it comes back when relevant.
- The block keeps the reference's words and budget (p.4): the lines come from
  ``paicli.memory.longterm.retriever.format_block``.
- Compaction treats it like the other internal messages: never a round of its own, never
  summarised (``rounds.NOT_SUMMARISED``), kept or dropped with the round it belongs to.

Pure functions on messages; the node layer fetches the block (``nodes/core/request.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from paicli.memory.context.rounds import MEMORY_CONTEXT, internal, internal_kind

LINE_PREFIX = "- ["  # reference (p.4): every memory line is "- [TYPE]…"


def is_memory_context(message: BaseMessage) -> bool:
    return internal_kind(message) == MEMORY_CONTEXT


def memory_context_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if is_memory_context(m)]


def shown_lines(messages: Sequence[BaseMessage]) -> frozenset[str]:
    """The memory lines (without their newline) the visible conversation already carries."""
    return frozenset(line for m in memory_context_messages(messages) for line in _text(m).splitlines()
                     if line.startswith(LINE_PREFIX))


def memory_message(block: str) -> HumanMessage | None:
    """The internal message carrying ``block``; None for an empty block. It gets its id now so
    the ledger writes it once and every later request sends it byte for byte the same."""
    text = block.strip()
    return internal(text, MEMORY_CONTEXT, id=str(uuid.uuid4())) if text else None


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else ""
