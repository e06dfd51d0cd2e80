"""load_context: the turn's PAI.md and its relevant long-term memories (reference q.2 item 9, p.5, i).

Once per user turn, before the first model call:

- the PAI.md files, read fresh every turn (the reference reads them on every prompt build), go
  into ``state["project_context"]``, the system prompt's ``## Project Context``. They change
  rarely; when they do, the system prompt changes from that turn on (docs/architecture.md,
  "Cache-stable requests").
- the long-term memories relevant to the user's text, within the ContextProfile budget (p.4),
  are appended as an internal message after the user's message (``nodes/support/request.py``),
  not put in the system prompt: the request before the conversation stays the same from turn
  to turn, so the provider's prefix cache keeps serving the whole conversation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from nodes.support.policy import classify_turn, user_text
from nodes.support.request import turn_memory
from nodes.support.state import AgentState, Deps, RunContext, long_term_memory, memory_project_key, run_context
from prompts.pai_md import load_project_memory
from tools.policy.classify import HEADLINE_NOTICE

def project_context(deps: Deps, ctx: RunContext) -> str:
    """The ``## Project Context`` body: the PAI.md files."""
    return load_project_memory(Path(ctx.project_root), deps.prompt_home).strip()


def make_load_context(deps: Deps):
    async def load_context(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, memory = run_context(runtime), long_term_memory(runtime, deps)
        messages = list(state.get("messages") or [])
        query = user_text(messages)
        if classify_turn(query).headline_only:  # reference (o.3)
            get_stream_writer()({"notice": HEADLINE_NOTICE.strip()})
        text = await asyncio.to_thread(project_context, deps, ctx)
        note = await asyncio.to_thread(turn_memory, memory, messages, query, window=ctx.context_window,
                                       project_key=memory_project_key(ctx), now=deps.clock())
        update: dict[str, Any] = {"messages": [note]} if note is not None else {}
        if text != state.get("project_context", ""):
            update["project_context"] = text
        return update

    return load_context
