"""load_context: the turn's PAI.md and its relevant long-term memories (reference q.2 item 9, p.5, i).

Once per user turn, before the first model call:

- the PAI.md files, read fresh every turn (the reference reads them on every prompt build), go
  into ``state["project_context"]``, the system prompt's ``## Project Context``. They change
  rarely; when they do, the system prompt changes from that turn on (docs/architecture.md,
  "Cache-stable requests").
- a PAI.md, an import or a prompt override that links out of the project (or out of
  ``$PAICLI_HOME`` for the user's own) is skipped, and the user sees one ⚠️ line naming it, once
  per graph (paicli issue 23, item 3); the model sees nothing of it.
- the long-term memories relevant to the user's text, within the ContextProfile budget (p.4),
  are appended as an internal message after the user's message (``nodes/core/request.py``),
  not put in the system prompt: the request before the conversation stays the same from turn
  to turn, so the provider's prefix cache keeps serving the whole conversation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.memory.context.profile import MCP_RESOURCE_INDEX_MIN_WINDOW
from paicli.nodes.core.policy import classify_turn, submitted_text
from paicli.nodes.core.request import turn_memory
from paicli.nodes.core.state import AgentState, Deps, RunContext, long_term_memory, memory_project_key, run_context
from paicli.prompts import PromptSources, outside_links
from paicli.prompts.pai_md import ProjectContext, read_project_context
from paicli.tools.policy.classify import HEADLINE_NOTICE


def pai_md(deps: Deps, ctx: RunContext) -> ProjectContext:
    """The PAI.md files, and every prompt source skipped because it links out of its owner."""
    root = Path(ctx.project_root)
    memory = read_project_context(root, deps.prompt_home)
    memory.skipped += outside_links(PromptSources.for_project(deps.prompt_home, root))
    return memory


def project_context(deps: Deps, ctx: RunContext) -> str:
    """The ``## Project Context`` body: the PAI.md files."""
    return pai_md(deps, ctx).text.strip()


def make_load_context(deps: Deps):
    warned: set[str] = set()  # each skipped link is shown once, not every turn

    async def load_context(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, memory = run_context(runtime), long_term_memory(runtime, deps)
        messages = list(state.get("messages") or [])
        query = submitted_text(messages)
        if classify_turn(query).headline_only:  # reference (o.3)
            get_stream_writer()({"notice": HEADLINE_NOTICE.strip()})
        found = await asyncio.to_thread(pai_md, deps, ctx)
        text = found.text.strip()
        if deps.mcp_index and ctx.context_window >= MCP_RESOURCE_INDEX_MIN_WINDOW:  # reference q.2 item 9
            text = "\n\n".join(part for part in (text, deps.mcp_index.strip()) if part)
        for line in found.skipped:
            if line not in warned:
                warned.add(line)
                get_stream_writer()({"notice": line})
        note = await asyncio.to_thread(turn_memory, memory, messages, query, window=ctx.context_window,
                                       project_key=memory_project_key(ctx), now=deps.clock())
        update: dict[str, Any] = {"messages": [note]} if note is not None else {}
        if text != state.get("project_context", ""):
            update["project_context"] = text
        return update

    return load_context
