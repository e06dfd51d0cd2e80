"""extract_facts: after a turn ends normally, save stable facts the user stated (reference n).

Runs when the turn's final answer arrived: not after an error, a cancel (the node is never
reached), or a budget finalization; never after the session read external content (o.1).
Only the user's own submitted text is read. The model call and the write run in the
background (``paicli.nodes.core.background``) on the light model, so the answer is never delayed; the
``💾`` notice waits there for the front end. The extraction pipeline is imported when a turn
first gets there, so a turn that extracts nothing never loads it (issue 30).
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from paicli.memory.context.rounds import BUDGET_FINALIZATION, internal_kind
from paicli.nodes.core.policy import submitted_text
from paicli.nodes.core.state import AgentState, Deps, RunContext, long_term_memory, memory_project_key, run_context
from paicli.nodes.core.turn_files import turn_files
from paicli.nodes.guards.turn import current_turn
from paicli.prompts import PromptSources, load_resource, render
from paicli.tools.policy.external_context import blocks_automatic_memory

if TYPE_CHECKING:
    from paicli.memory.longterm.fact_extraction import ExtractionPrompts
    from paicli.memory.longterm.manager import LongTermMemory

def extraction_prompts(sources: PromptSources = PromptSources()) -> ExtractionPrompts:
    from paicli.memory.longterm.fact_extraction import ExtractionPrompts

    system = load_resource("extraction/system.md", sources).strip()
    user = load_resource("extraction/user.md", sources).strip()
    return ExtractionPrompts(system=system, user=lambda safe: render(user, {"input": safe}))


def ended_normally(state: AgentState) -> bool:
    """reference (n.1): a final answer, no error, no budget finalization in this turn."""
    messages = list(state.get("messages") or [])
    last = messages[-1] if messages else None
    if state.get("error") or not isinstance(last, AIMessage) or last.tool_calls or last.invalid_tool_calls:
        return False
    return not any(internal_kind(m) == BUDGET_FINALIZATION for m in current_turn(messages))


def make_extract_facts(deps: Deps):
    sources = PromptSources.for_project(deps.prompt_home, None)
    prompts = functools.cache(lambda: extraction_prompts(sources))  # made at the first extraction

    async def extract_facts(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        memory = long_term_memory(runtime, deps)
        sources = tuple(state.get("external_sources") or ())
        if (not deps.auto_extract or memory is None or deps.background is None or not ended_normally(state)
                or blocks_automatic_memory(sources, deps.external_guard)):
            return {}
        ctx = run_context(runtime)
        messages = list(state["messages"])
        deps.background.submit(run(memory, submitted_text(messages), turn_files(messages, deps.tools), ctx), "extract-facts")
        return {}

    async def run(memory: LongTermMemory, text: str, files: tuple[str, ...], ctx: RunContext) -> None:
        from paicli.memory.longterm.entry import SOURCE_FILES_KEY
        from paicli.memory.longterm.fact_extraction import extract, facts_to_entries, saved_notice
        from paicli.memory.longterm.file import MemoryAccessError

        result = await extract(deps.light_model or deps.model, text, prompts())
        if not result.quotes:
            return

        def save() -> list[Any]:  # file locks and realpath: off the event loop
            entries = facts_to_entries(result.quotes, memory_project_key(ctx), deps.clock())
            if files:  # Q13: linked to the files this turn read or wrote
                entries = [replace(e, metadata={**e.metadata, SOURCE_FILES_KEY: ",".join(files)}) for e in entries]
            return memory.save_automatic(entries)

        try:
            written = await asyncio.to_thread(save)
        except MemoryAccessError as error:  # the user should learn their facts were not kept
            deps.background.notice(f"⚠️ 自动提取的事实未保存: {error}")
            return
        if written:
            deps.background.notice(saved_notice(len(written)))

    return extract_facts
