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
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from memory.memory_entry import normalize_project_key
from memory.profile import ContextProfile
from memory.rounds import internal_kind
from nodes.state import AgentState, Deps, RunContext, long_term_memory, run_context
from prompts.pai_md import load_project_memory


def user_text(state: AgentState) -> str:
    """The text of the turn's real user message (internal reminders do not count)."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, HumanMessage) and internal_kind(message) is None:
            return message.text if isinstance(message.text, str) else str(message.content)
    return ""


def project_context(deps: Deps, memory: Any, ctx: RunContext, query: str) -> str:
    root = Path(ctx.project_root)
    parts = [load_project_memory(root, deps.prompt_home or Path.home() / ".paicli")]
    if memory is not None:
        budget = ContextProfile.from_window(ctx.context_window).memory_context_tokens
        parts.append(memory.context_block(query, budget, normalize_project_key(root), deps.clock()))
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def make_load_context(deps: Deps):
    async def load_context(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, memory = run_context(runtime), long_term_memory(runtime, deps)
        text = await asyncio.to_thread(project_context, deps, memory, ctx, user_text(state))
        return {"project_context": text} if text != state.get("project_context", "") else {}

    return load_context
