"""load_context: the turn's ``## Project Context`` (reference q.2 item 9, p.5, i).

Once per user turn, before the first model call: the PAI.md files (read fresh every turn, as
the reference reads them on every prompt build) and the long-term memories relevant to the
user's text, within the ContextProfile memory budget (p.4). The result goes into state, so
every request of the turn sends the same system prompt and only the new messages differ,
which keeps the provider's prefix cache warm.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from memory.longterm.entry import normalize_project_key
from memory.context.profile import ContextProfile
from nodes.support.policy import classify_turn, user_text
from nodes.support.state import AgentState, Deps, RunContext, long_term_memory, run_context
from prompts.pai_md import load_project_memory
from tools.policy.classify import HEADLINE_NOTICE

if TYPE_CHECKING:
    from memory.longterm.manager import LongTermMemory


def project_context(deps: Deps, memory: LongTermMemory | None, ctx: RunContext, query: str) -> str:
    root = Path(ctx.project_root)
    parts = [load_project_memory(root, deps.prompt_home)]
    if memory is not None:
        budget = ContextProfile.from_window(ctx.context_window).memory_context_tokens
        parts.append(memory.context_block(query, budget, normalize_project_key(root), deps.clock()))
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def make_load_context(deps: Deps):
    async def load_context(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, memory = run_context(runtime), long_term_memory(runtime, deps)
        query = user_text(list(state.get("messages") or []))
        if classify_turn(query).headline_only:  # reference (o.3)
            get_stream_writer()({"notice": HEADLINE_NOTICE.strip()})
        text = await asyncio.to_thread(project_context, deps, memory, ctx, query)
        return {"project_context": text} if text != state.get("project_context", "") else {}

    return load_context
