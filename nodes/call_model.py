"""call_model: one streamed model call with the system prompt and the exposed tools.

The system prompt is assembled here, per call, from cached pieces, and never stored in state.
LangGraph's ``messages`` stream mode turns ``ainvoke`` into a token stream for the CLI and
Studio. Provider failures that survive the client's retries end the turn with ``error`` set;
the conversation so far stays as it is (reference s.2.11).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import openai
from langchain_core.exceptions import LangChainException
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from memory.budget import partial_result
from memory.provider_errors import describe_provider_error, is_context_overflow
from nodes.policy import turn_view
from nodes.state import AgentState, Deps, RunContext, run_context
from nodes.turn_guard import FINALIZATION_NOTICE, current_turn, exceeded, finalization_request
from prompts import PromptSources, assemble_system_prompt
from tools.registry import schemas

PROVIDER_ERRORS = (openai.APIError, LangChainException)


def system_prompt(deps: Deps, ctx: RunContext, now: datetime, project_context: str = "") -> str:
    sources = PromptSources.for_project(deps.prompt_home, Path(ctx.project_root))
    return assemble_system_prompt(mode="agent", approval=ctx.approval, now=now, sources=sources,
                                  project_context=project_context)


def with_call_ids(message: AIMessage) -> AIMessage:
    """Some providers omit tool call ids; results need one to pair with."""
    if all(c.get("id") for c in message.tool_calls):
        return message
    calls = [{**c, "id": c.get("id") or f"call_{uuid.uuid4().hex[:24]}"} for c in message.tool_calls]
    return message.model_copy(update={"tool_calls": calls})


class ModelCaller:
    """What one model call needs, cached: the system prompt, the tool schemas, the bound model."""

    def __init__(self, deps: Deps):
        self.deps = deps
        self._bound: dict[int, tuple[Any, list[dict[str, Any]], Any]] = {}
        self._schemas: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        self._system: tuple[tuple[Any, ...], SystemMessage] | None = None

    def system_message(self, ctx: RunContext, project_context: str = "") -> SystemMessage:
        """The prompt only changes with its inputs, the date and the turn's project context
        (``state["project_context"]``), so build it once per key."""
        now = self.deps.clock()
        key = (self.deps.prompt_home, ctx.project_root, ctx.approval, now.date(), now.tzname(), project_context)
        if self._system is None or self._system[0] != key:
            self._system = (key, SystemMessage(system_prompt(self.deps, ctx, now, project_context)))
        return self._system[1]

    def exposed_schemas(self, names: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """The schemas of the tools the turn policy exposes (all when ``names`` is None); the
        same list object while that set holds, so the bound model is reused."""
        key = tuple(sorted(self.deps.tools if names is None else names & self.deps.tools.keys()))
        if key not in self._schemas:
            self._schemas[key] = schemas(self.deps.tools[name] for name in key)
        return self._schemas[key]

    def bound_model(self, names: frozenset[str] | None = None):
        exposed = self.exposed_schemas(names)
        cached = self._bound.get(id(exposed))
        if cached is None or cached[0] is not self.deps.model or cached[1] is not exposed:
            cached = self._bound[id(exposed)] = (self.deps.model, exposed, self.deps.model.bind_tools(exposed))
        return cached[2]

    async def invoke(self, messages: list[BaseMessage], ctx: RunContext, project_context: str = "",
                     tools: frozenset[str] | None = None) -> AIMessage:
        """``tools``: the names the turn policy advertises for this call (reference o.4)."""
        response = await self.bound_model(tools).ainvoke([self.system_message(ctx, project_context), *messages])
        if not isinstance(response, AIMessage):
            response = AIMessage(content=str(response.content))
        return with_call_ids(response)


async def finalize(caller: ModelCaller, messages: list[BaseMessage], ctx: RunContext, reason: str,
                   project_context: str = "") -> dict[str, Any]:
    """reference (s.3) finalization: one call with no tools for a best-effort partial result."""
    get_stream_writer()({"notice": FINALIZATION_NOTICE})
    request = finalization_request(reason)
    try:
        # Not streamed: the CLI shows the whole partial result, with its ⚠️ prefix, at once.
        model = caller.deps.model.with_config(tags=["nostream"])
        reply = await model.ainvoke([caller.system_message(ctx, project_context), *messages, request])
        content = reply.text if isinstance(reply.text, str) else str(reply.content)
    except PROVIDER_ERRORS as exc:
        content = f"收尾调用失败：{describe_provider_error(exc)}"
    return {"messages": [request, AIMessage(partial_result(reason, content))]}


def failure(exc: BaseException) -> dict[str, Any]:
    return {"error": f"❌ 调用 LLM 失败: {describe_provider_error(exc)}"}


def make_call_model(caller: ModelCaller, compaction: Any):
    """``compaction`` is the graph's ``nodes.compact.Compaction`` (not imported here: it is
    built around a ``ModelCaller``). On a context overflow it forces one compaction and
    retries once (ARCHITECTURE.md Q3/Q4); a second failure keeps the history as it was."""

    async def call_model(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, messages = run_context(runtime), list(state["messages"])
        extra, tools = state.get("project_context", ""), turn_view(state, caller.deps).advertised
        reason = exceeded(current_turn(messages), caller.deps.budget)
        if reason:
            return await finalize(caller, messages, ctx, reason, extra)
        try:
            return {"messages": [await caller.invoke(messages, ctx, extra, tools)]}
        except PROVIDER_ERRORS as exc:
            if not is_context_overflow(exc):
                return failure(exc)
            overflow = exc
        result = await compaction.run(messages, ctx, force=True, project_context=extra)
        if result is None:
            return failure(overflow)
        try:
            response = await caller.invoke(result.messages, ctx, extra, tools)
        except PROVIDER_ERRORS as exc:
            return failure(exc)
        update = compaction.applied(result, ctx)
        update["messages"].append(response)
        return update

    return call_model
