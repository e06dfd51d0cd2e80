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
from langchain_core.messages import AIMessage, SystemMessage
from langgraph.runtime import Runtime

from memory.provider_errors import describe_provider_error
from nodes.state import AgentState, Deps, RunContext, run_context
from prompts import PromptSources, assemble_system_prompt
from tools.registry import schemas

PROVIDER_ERRORS = (openai.APIError, LangChainException)


def system_prompt(deps: Deps, ctx: RunContext, now: datetime) -> str:
    sources = PromptSources.for_project(deps.prompt_home, Path(ctx.project_root))
    return assemble_system_prompt(mode="agent", approval=ctx.approval, now=now, sources=sources)


def with_call_ids(message: AIMessage) -> AIMessage:
    """Some providers omit tool call ids; results need one to pair with."""
    if all(c.get("id") for c in message.tool_calls):
        return message
    calls = [{**c, "id": c.get("id") or f"call_{uuid.uuid4().hex[:24]}"} for c in message.tool_calls]
    return message.model_copy(update={"tool_calls": calls})


class ModelCaller:
    """Binds tools once per (model, tool set) and calls the model."""

    def __init__(self, deps: Deps):
        self.deps = deps
        self._bound: tuple[Any, tuple[str, ...], Any] | None = None
        self._system: tuple[tuple[Any, ...], SystemMessage] | None = None

    def system_message(self, ctx: RunContext) -> SystemMessage:
        """The prompt only changes with its inputs and the date, so build it once per key."""
        now = self.deps.clock()
        key = (self.deps.prompt_home, ctx.project_root, ctx.approval, now.date(), now.tzname())
        if self._system is None or self._system[0] != key:
            self._system = (key, SystemMessage(system_prompt(self.deps, ctx, now)))
        return self._system[1]

    def bound_model(self):
        names = tuple(sorted(self.deps.tools))
        if self._bound is None or self._bound[0] is not self.deps.model or self._bound[1] != names:
            exposed = schemas(self.deps.tools.values())
            self._bound = (self.deps.model, names, self.deps.model.bind_tools(exposed))
        return self._bound[2]

    async def __call__(self, state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = run_context(runtime)
        prompt = [self.system_message(ctx), *state["messages"]]
        try:
            response = await self.bound_model().ainvoke(prompt)
        except PROVIDER_ERRORS as exc:
            return {"error": f"❌ 调用 LLM 失败: {describe_provider_error(exc)}"}
        if not isinstance(response, AIMessage):
            response = AIMessage(content=str(response.content))
        return {"messages": [with_call_ids(response)]}


def make_call_model(deps: Deps):
    caller = ModelCaller(deps)

    async def call_model(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        return await caller(state, runtime)

    return call_model
