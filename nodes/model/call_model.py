"""call_model: one streamed model call with the system prompt and the exposed tools.

The system prompt is assembled here, per call, from cached pieces, and never stored in state.
LangGraph's ``messages`` stream mode passes the model's stream on to the CLI and Studio.
Provider failures that survive the retries end the turn with ``error`` set; the conversation
so far stays as it is (reference s.2.11). Besides the client's own retries, one retry here
covers what the client cannot see: a stream that ended before its finish reason, or a
connection dropped mid-stream (``paicli.nodes.model.response``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.memory.tokens import text_of
from paicli.nodes.core.policy import DecisionContext, decide_iteration, decision_context
from paicli.nodes.core.request import assemble_request
from paicli.nodes.core.state import AgentState, Deps, RunContext, long_term_memory, run_context
from paicli.nodes.guards.budget import partial_result
from paicli.nodes.guards.cutoff import RETRY_NOTICE, incomplete_text
from paicli.nodes.guards.provider_errors import describe_provider_error, is_context_overflow, smaller_window
from paicli.nodes.guards.turn import FINALIZATION_NOTICE, current_turn, exceeded, finalization_request
from paicli.nodes.model.response import (
    PROVIDER_ERRORS,
    Checked,
    DroppedMidStream,
    IncompleteResponse,
    check_response,
    stream_response,
)
from paicli.prompts import PromptSources, assemble_system_prompt, loop_prompt
from paicli.tools.base import ToolSpec
from paicli.tools.call import calls_of
from paicli.tools.registry import schemas

Notify = Callable[[str], None]


def system_prompt(deps: Deps, ctx: RunContext, now: datetime, project_context: str = "") -> str:
    sources = PromptSources.for_project(deps.prompt_home, Path(ctx.project_root))
    return assemble_system_prompt(mode=loop_prompt(ctx.mode), approval=ctx.approval, now=now, sources=sources,
                                  skills=skill_index(deps, ctx), project_context=project_context,
                                  web_search="web_search" in deps.tools)


def skill_index(deps: Deps, ctx: RunContext) -> str:
    """The ``## Skills`` index (reference q.2 item 7): changes only on /skill on|off|trust|reload."""
    if deps.skills is None:
        return ""
    return deps.skills.index(Path(ctx.project_root), PromptSources.for_project(deps.prompt_home, Path(ctx.project_root)))


def with_call_ids(message: AIMessage) -> AIMessage:
    """Some providers omit tool call ids; results (error results too) need one to pair with."""
    if all(c.get("id") for c in [*message.tool_calls, *message.invalid_tool_calls]):
        return message
    calls, invalid = ([{**c, "id": c.get("id") or f"call_{uuid.uuid4().hex[:24]}"} for c in group]
                      for group in (message.tool_calls, message.invalid_tool_calls))
    return message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})


def with_tools(model: BaseChatModel, tool_schemas: list[dict[str, Any]]) -> Any:
    """The model, told the tools' schemas. A chat model that cannot be told (``bind_tools`` not
    implemented, as langchain_core's fakes) is called as it is: the calls it makes still go
    through the same checks, decisions and tools (issue 36: the graphs run with any chat model)."""
    try:
        return model.bind_tools(tool_schemas)
    except NotImplementedError:
        return model


class ModelCaller:
    """What one model call needs, cached: the system prompt, the tool schemas, the bound model."""

    def __init__(self, deps: Deps):
        self.deps = deps
        self._bound: dict[int, tuple[Any, list[dict[str, Any]], Any]] = {}
        self._schemas: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        self._system: tuple[tuple[Any, ...], SystemMessage] | None = None

    def system_message(self, ctx: RunContext, project_context: str = "") -> SystemMessage:
        """The prompt only changes with its inputs, the date and the PAI.md files
        (``state["project_context"]``), so build it once per key. Memories are not in it: they
        ride with their turn (``nodes/core/request.py``)."""
        now = self.deps.clock()
        key = (self.deps.prompt_home, ctx.project_root, ctx.approval, ctx.mode, now.date(), now.tzname(),
               project_context, skill_index(self.deps, ctx), "web_search" in self.deps.tools)
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
            cached = self._bound[id(exposed)] = (self.deps.model, exposed, with_tools(self.deps.model, exposed))
        return cached[2]

    async def invoke(self, messages: list[BaseMessage], ctx: RunContext, project_context: str = "",
                     tools: frozenset[str] | None = None, notify: Notify = lambda _text: None,
                     retrying: Notify | None = None) -> AIMessage:
        """``tools``: the names the turn policy advertises for this call (reference o.4);
        ``notify`` shows the user one line (calls not run, a cut answer), ``retrying`` the line
        saying the call is made again (default: ``notify``). The second call is not streamed
        (issue 41): what the first streamed was shown once, and the answer is shown whole."""
        request = assemble_request(self.system_message(ctx, project_context), messages)
        checked = await self._attempt(request, tools, retrying or notify, retry=True)
        if checked is None:
            checked = await self._attempt(request, tools, notify, retry=False)
        if checked.notice:
            notify(checked.notice)
        return with_call_ids(checked.message)

    async def _attempt(self, request: list[BaseMessage], tools: frozenset[str] | None, notify: Notify,
                       retry: bool) -> Checked | None:
        """One model call, checked; None when it is to be retried (the user is told why)."""
        model = self.bound_model(tools) if retry else self.bound_model(tools).with_config(tags=["nostream"])
        try:
            checked = check_response(await stream_response(model, request))
        except DroppedMidStream as exc:
            if not retry:
                raise
            problem = describe_provider_error(exc)
        else:
            if not checked.unfinished:
                return checked
            problem = incomplete_text(checked.unfinished)
            if not retry:
                raise IncompleteResponse(f"{problem}，重试后仍未完成")
        notify(RETRY_NOTICE.format(problem=problem))
        return None


async def finalize(caller: ModelCaller, messages: list[BaseMessage], ctx: RunContext, reason: str,
                   project_context: str = "") -> dict[str, Any]:
    """reference (s.3) finalization: one call with no tools for a best-effort partial result."""
    get_stream_writer()({"notice": FINALIZATION_NOTICE})
    request = finalization_request(reason)
    try:
        # Not streamed: the CLI shows the whole partial result, with its ⚠️ prefix, at once.
        model = caller.deps.model.with_config(tags=["nostream"])
        reply = await model.ainvoke(assemble_request(caller.system_message(ctx, project_context), [*messages, request]))
        content = text_of(reply)
    except PROVIDER_ERRORS as exc:
        content = f"收尾调用失败：{describe_provider_error(exc)}"
    return {"messages": [request, AIMessage(partial_result(reason, content))]}


def failure(exc: BaseException, hint: str | None = None) -> dict[str, Any]:
    return {"error": f"❌ 调用 LLM 失败: {describe_provider_error(exc)}" + (f"；{hint}" if hint else "")}


async def with_decisions(update: dict[str, Any], context: DecisionContext,
                         tools: Mapping[str, ToolSpec]) -> dict[str, Any]:
    """Decide the answer's tool calls here, once, with the context the model was called with
    (``paicli.nodes.core.policy``): the router, the gate and execution read the records. Each
    call is one value (``paicli.tools.call``) with the spec and facts of ``tools``' tool."""
    answer = (update.get("messages") or [None])[-1]
    if isinstance(answer, AIMessage) and answer.tool_calls:
        update["decisions"] = await decide_iteration(calls_of(answer, tools), context)
    return update


def make_call_model(caller: ModelCaller, compaction: Any):
    """``compaction`` is the graph's ``paicli.nodes.compact.Compaction`` (not imported here: it is
    built around a ``ModelCaller``). On a context overflow it forces one compaction and
    retries once (Q3/Q4, docs/behavior.md#decisions); a second failure keeps the history as it was."""

    async def call_model(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = run_context(runtime)
        context = decision_context(state, ctx, caller.deps)
        return await with_decisions(await answer(state, runtime, ctx, context), context, caller.deps.tools)

    async def answer(state: AgentState, runtime: Runtime[RunContext], ctx: RunContext, context: DecisionContext) -> dict[str, Any]:
        messages, extra, tools = list(state["messages"]), state.get("project_context", ""), context.advertised
        reason = exceeded(current_turn(messages), caller.deps.budget)
        if reason:
            return await finalize(caller, messages, ctx, reason, extra)
        writer = get_stream_writer()
        notify: Notify = lambda text: writer({"notice": text})  # noqa: E731
        for line in await caller.deps.notices(ctx.session_id) if caller.deps.notices is not None else ():
            notify(line)  # e.g. an MCP server that failed: its tools are missing from this call
        retrying: Notify = lambda text: writer({"notice": text, "discard_stream": True, "waiting": True})  # noqa: E731
        try:
            return {"messages": [await caller.invoke(messages, ctx, extra, tools, notify, retrying)]}
        except PROVIDER_ERRORS as exc:
            if not is_context_overflow(exc):
                return failure(exc)
            overflow = exc
        hint = smaller_window(compaction.estimate(messages, ctx, extra), ctx.context_window)
        if hint:
            notify(f"⚠️ {hint}")
        result = await compaction.run(messages, ctx, force=True, project_context=extra)
        result = compaction.with_turn_memory(result, long_term_memory(runtime, caller.deps), ctx)
        if result is None:
            return failure(overflow, hint)
        try:
            response = await caller.invoke(result.messages, ctx, extra, tools, notify, retrying)
        except PROVIDER_ERRORS as exc:
            return failure(exc, hint if is_context_overflow(exc) else None)
        update = compaction.applied(result, ctx)
        update["messages"].append(response)
        return update

    return call_model
