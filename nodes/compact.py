"""compact: the three-tier pipeline before a model call, on the unit's own messages.

``Compaction`` is built once per graph and shared by four callers: the router in front of
``call_model`` (one cached estimate decides whether the ``compact`` node runs at all, so the
common path costs nothing extra; over the first threshold, whether a tier would actually fire),
the ``compact`` node, ``call_model``'s overflow retry, and the CLI's ``/compact`` and ``/context``. Each rewrite leaves a ``compaction`` record in state,
which the session ledger writes as a ``compaction`` event, and a notice on the custom stream.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.config import get_stream_writer
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from paicli.memory.context.clearing import ToolResultClearer
from paicli.memory.context.compaction import CompactionResult, Compactor
from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.session_memory import SessionMemoryCompactor
from paicli.memory.tokens import Estimator, text_of
from paicli.nodes.core.compaction_prompts import session_prompts, summary_prompts
from paicli.nodes.core.policy import submitted_text
from paicli.nodes.core.request import turn_memory
from paicli.nodes.core.state import AgentState, RunContext, long_term_memory, memory_project_key, run_context
from paicli.nodes.model.call_model import ModelCaller
from paicli.prompts import PromptSources

SUMMARY_TAGS = ["nostream", "paicli:summary"]  # keep summary tokens out of the answer stream


class Compaction:
    def __init__(self, caller: ModelCaller):
        self.caller = caller
        options = caller.deps.compaction
        sources = PromptSources.for_project(caller.deps.prompt_home, None)
        self.estimator = Estimator()
        self.compactor = Compactor(
            self.summarize,
            summary_prompts(sources),
            estimator=self.estimator,
            clearer=ToolResultClearer(options.clearing, options.clearing_keep, options.clearing_exclude),
            session_memory=SessionMemoryCompactor(self.summarize, session_prompts(sources), enabled=options.session_memory),
        )

    async def summarize(self, messages: list[BaseMessage]) -> str:
        reply = await self.caller.deps.model.with_config(tags=SUMMARY_TAGS).ainvoke(messages)
        return text_of(reply)

    def profile(self, ctx: RunContext) -> ContextProfile:
        return ContextProfile.from_window(ctx.context_window, clearing_override=self.caller.deps.compaction.clearing_trigger)

    def system(self, ctx: RunContext, project_context: str = "") -> str:
        return self.caller.system_message(ctx, project_context).content

    def estimate(self, messages: list[BaseMessage], ctx: RunContext, project_context: str = "") -> int:
        """Tokens of the next request: messages, system prompt and the exposed tool schemas (Q1)."""
        return self.estimator.estimate(messages, self.caller.exposed_schemas(), self.system(ctx, project_context))

    def needed(self, state: AgentState, ctx: RunContext) -> bool:
        """Whether the compact node would change anything (``Compactor.would_act``): below the
        first threshold one cached estimate says no; above it, whether a tier would fire."""
        messages = state.get("messages") or []
        if not messages:
            return False
        profile = self.profile(ctx)
        tokens = self.estimate(messages, ctx, state.get("project_context", ""))
        return self.compactor.would_act(messages, profile, tokens)

    async def run(self, messages: list[BaseMessage], ctx: RunContext, *, force: bool = False,
                  project_context: str = "") -> CompactionResult | None:
        return await self.compactor.compact_if_needed(
            messages,
            self.profile(ctx),
            unit=f"{ctx.session_id}:{ctx.mode}",
            tools_schema=self.caller.exposed_schemas(),
            system=self.system(ctx, project_context),
            force=force,
        )

    def with_turn_memory(self, result: CompactionResult | None, memory: Any, ctx: RunContext) -> CompactionResult | None:
        """A summary drops the memory messages of the rounds it replaces (they are clues, not
        facts), and this turn's memory message left out the lines those showed. The memories
        relevant to this turn that left with them come back at the end of the new list: the
        rewrite has invalidated the cached prefix anyway, so this costs nothing extra."""
        if result is None or not result.compacted:
            return result
        note = turn_memory(memory, result.messages, submitted_text(result.messages), window=ctx.context_window,
                           project_key=memory_project_key(ctx), now=self.caller.deps.clock())
        return result if note is None else replace(result, messages=[*result.messages, note])

    def applied(self, result: CompactionResult, ctx: RunContext) -> dict[str, Any]:
        """Announce a rewrite on the custom stream and return the state update for it."""
        announce(result, ctx.mode)
        return state_update(result, ctx.mode)

    async def now(self, messages: list[BaseMessage], ctx: RunContext,
                  project_context: str = "") -> CompactionResult | None:
        """``/compact``: a full summary keeping one user round."""
        return await self.compactor.compact_now(
            messages, unit=f"{ctx.session_id}:{ctx.mode}", tools_schema=self.caller.exposed_schemas(),
            system=self.system(ctx, project_context),
        )


def state_update(result: CompactionResult, mode: str = "react") -> dict[str, Any]:
    """Messages to write (in-place edits, or the whole list after a summary) and the record."""
    if result.compacted:
        messages: list[Any] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *result.messages]
    else:
        messages = list(result.replaced)
    source, metadata = result.record.ledger_event(mode)
    return {"messages": messages, "compaction": {"source": source, "metadata": metadata, "mode": mode}}


def announce(result: CompactionResult, mode: str = "react") -> None:
    write = get_stream_writer()
    for notice in result.notices(mode):
        write({"notice": notice})


def make_compact(compaction: Compaction):
    async def compact(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = run_context(runtime)
        result = await compaction.run(state.get("messages") or [], ctx,
                                      project_context=state.get("project_context", ""))
        result = compaction.with_turn_memory(result, long_term_memory(runtime, compaction.caller.deps), ctx)
        return {} if result is None else compaction.applied(result, ctx)

    return compact
