"""Assembling a cache-stable request: the shared function for every execution unit (issue 13).

A request is ``[system prompt, *messages]`` and nothing else, so a unit's next request starts
with its last one byte for byte (the provider's prefix cache serves all of it):

- the system prompt holds only what changes rarely: identity, tools guidance, policies, PAI.md,
  the day's runtime context (``paicli.nodes.model.call_model.ModelCaller.system_message``);
- the memories relevant to a turn travel with that turn, as an internal message appended once
  after its user message (``turn_memory``); nothing already sent is edited, except by compaction.

The ReAct turn calls ``turn_memory`` in ``load_context`` and ``assemble_request`` in
``call_model``. A Plan task or Team step calls the same two on its own message list: after
appending its brief, ``turn_memory(memory, messages, task_text, ...)``, then
``assemble_request`` for each model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.turn_memory import memory_message, shown_lines


def turn_memory(memory: Any, history: Sequence[BaseMessage], query: str, *, window: int,
                project_key: str, now: datetime) -> HumanMessage | None:
    """The internal message with the long-term memories relevant to ``query`` (reference p.4:
    the ContextProfile budget, the block's words) that ``history`` does not already show; None
    when there is nothing new to add. ``memory``: a ``LongTermMemory`` or None (no memory)."""
    if memory is None or not query.strip():
        return None
    budget = ContextProfile.from_window(window).memory_context_tokens
    block = memory.context_block(query, budget, project_key, now,
                                 shown=shown_lines(history))
    return memory_message(block)


def assemble_request(system: SystemMessage, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """What is sent: the unit's stable system prompt, then its messages exactly as stored."""
    return [system, *messages]
