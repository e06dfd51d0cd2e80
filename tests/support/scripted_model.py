"""A scripted chat model for graph tests: no ``patch()`` of our modules needed.

The script is a list of `AIMessage`s (returned in order) or exceptions (raised when reached).
The model records every prompt it was shown, fails loudly when the script runs out, and streams
like a real provider (word tokens, then `tool_call_chunks`, then a last chunk with usage and
`finish_reason`), which LangGraph's `stream_mode="messages"` needs: langchain_core's own fakes
break there (notes §6.1).

A step's `finish_reason` defaults to what a provider sends ("tool_calls" / "stop");
`ai(..., finish_reason=None)` is a stream that ended without one, and `raw_call(name, text)`
is a call whose argument string is streamed exactly as given (e.g. cut off mid-JSON).

Parallel branches (Plan tasks) call the model in no fixed order, so a model can also answer by
content: ``ScriptedChatModel.by_content({"当前任务：读取 a": [ai(...), ...], ...})`` answers a
request with the next step of the first key found in its user messages' text.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr


def tool_call(name: str, args: dict[str, Any] | None = None, id: str | None = None) -> dict:
    """A tool call for `ai(...)`; a missing id is filled in deterministically by the model."""
    return {"name": name, "args": dict(args or {}), "id": id, "type": "tool_call"}


def raw_call(name: str, arguments: str, id: str | None = None) -> dict:
    """A call for `ai(...)` whose arguments are streamed as this exact text."""
    return {"name": name, "args": arguments, "id": id, "error": None, "type": "invalid_tool_call"}


AUTO = "auto"


def ai(text: str = "", *calls: dict, usage: dict | tuple[int, int] | None = None,
       finish_reason: str | None = AUTO, **kwargs: Any) -> AIMessage:
    """An AIMessage script step; `usage` may be `(input_tokens, output_tokens)`;
    `finish_reason=None`: the stream ends without one."""
    if isinstance(usage, tuple):
        usage = {"input_tokens": usage[0], "output_tokens": usage[1],
                 "total_tokens": usage[0] + usage[1]}
    if finish_reason != AUTO:
        kwargs["response_metadata"] = {**kwargs.get("response_metadata", {}), "finish_reason": finish_reason}
    parsed = [c for c in calls if c.get("type") != "invalid_tool_call"]
    raw = [c for c in calls if c.get("type") == "invalid_tool_call"]
    return AIMessage(content=text, tool_calls=parsed, invalid_tool_calls=raw, usage_metadata=usage, **kwargs)


@dataclass
class _Recorder:
    """State shared by a model and every copy `bind_tools` hands out."""

    script: list[Any]
    cursor: int = 0
    routes: dict[str, list[Any]] = field(default_factory=dict)  # key -> steps, for by_content
    seen: list[list[BaseMessage]] = field(default_factory=list)
    seen_tools: list[list[dict]] = field(default_factory=list)
    bindings: list[dict] = field(default_factory=list)
    # Parallel graph branches may call the model from several threads at once.
    lock: threading.Lock = field(default_factory=threading.Lock)


class ScriptedChatModel(BaseChatModel):
    """Replays a script of AIMessages / exceptions; see the module docstring."""

    script: list[Any]
    delay: float = 0.0
    """Seconds to wait before each step (async waits are cancellable)."""

    _rec: _Recorder = PrivateAttr()
    _tools: list[dict] = PrivateAttr(default_factory=list)

    def __init__(self, script: Sequence[AIMessage | BaseException], **kwargs: Any) -> None:
        super().__init__(script=[_with_finish_reason(_with_call_ids(s, i)) for i, s in enumerate(script)], **kwargs)
        self._rec = _Recorder(script=self.script)

    @classmethod
    def by_content(cls, routes: dict[str, Sequence[AIMessage | BaseException]], **kwargs: Any) -> ScriptedChatModel:
        """A model answering each request with the next step of the first key its user messages contain."""
        model = cls([], **kwargs)
        model._rec.routes = {key: [_with_finish_reason(_with_call_ids(s, 1000 * (k + 1) + i))
                                   for i, s in enumerate(steps)] for k, (key, steps) in enumerate(routes.items())}
        return model

    @property
    def _llm_type(self) -> str:
        return "scripted"

    # -- what tests inspect ---------------------------------------------------------------
    @property
    def seen(self) -> list[list[BaseMessage]]:
        """Deep copies of the message lists the model was called with, in order."""
        return self._rec.seen

    @property
    def seen_tools(self) -> list[list[dict]]:
        """For each call, the OpenAI-format tool schemas bound on the instance that was called."""
        return self._rec.seen_tools

    @property
    def calls(self) -> int:
        return len(self._rec.seen)

    @property
    def bound_tools(self) -> list[dict]:
        """Schemas of this instance's tools, or of the latest `bind_tools` on the original."""
        if self._tools:
            return self._tools
        return self._rec.bindings[-1]["tools"] if self._rec.bindings else []

    @property
    def bindings(self) -> list[dict]:
        """Every `bind_tools` call: `{"tools": [...schemas], "kwargs": {...}}`."""
        return self._rec.bindings

    def remaining(self) -> int:
        return len(self._rec.script) - self._rec.cursor + sum(len(s) for s in self._rec.routes.values())

    def assert_consumed(self) -> None:
        left = self._rec.script[self._rec.cursor:] + [s for steps in self._rec.routes.values() for s in steps]
        if left:
            raise AssertionError(
                f"ScriptedChatModel: {len(left)} step(s) never used: "
                + "; ".join(_summary(s) for s in left))

    # -- langchain hooks --------------------------------------------------------------------
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        # A copy (not self) so two nodes binding different tools are told apart in
        # `seen_tools`; model_copy shares the private recorder, so cursor and `seen` are common.
        schemas = [convert_to_openai_tool(t) for t in tools]
        self._rec.bindings.append({"tools": schemas, "kwargs": kwargs})
        bound = self.model_copy()
        bound._tools = schemas
        return bound

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        step = self._next_step(messages)
        time.sleep(self.delay)
        return ChatResult(generations=[ChatGeneration(message=step)])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        step = self._next_step(messages)
        await asyncio.sleep(self.delay)
        return ChatResult(generations=[ChatGeneration(message=step)])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        step = self._next_step(messages)
        time.sleep(self.delay)
        # No on_llm_new_token here: BaseChatModel.stream / _generate_with_cache emit it per chunk.
        for chunk in stream_chunks(step):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        step = self._next_step(messages)
        await asyncio.sleep(self.delay)
        for chunk in stream_chunks(step):
            yield ChatGenerationChunk(message=chunk)

    # -- internals ---------------------------------------------------------------------------
    def _next_step(self, messages: list[BaseMessage]) -> AIMessage:
        """Record the prompt, then return (a copy of) the next step or raise it."""
        rec = self._rec
        with rec.lock:
            rec.seen.append(copy.deepcopy(list(messages)))
            rec.seen_tools.append(copy.deepcopy(self._tools))
            if rec.routes:
                step = _route(rec.routes, messages)
            elif rec.cursor >= len(rec.script):
                raise AssertionError(
                    f"ScriptedChatModel: script exhausted after {len(rec.script)} step(s); "
                    f"call {len(rec.seen)} was shown: {_summary_messages(messages)}")
            else:
                step = rec.script[rec.cursor]
                rec.cursor += 1
        if isinstance(step, BaseException):
            raise step
        return step.model_copy(deep=True)


def _route(routes: dict[str, list[Any]], messages: Sequence[BaseMessage]) -> Any:
    text = "\n".join(str(m.content) for m in messages if m.type == "human")
    for key, steps in routes.items():
        if key in text:
            if not steps:
                raise AssertionError(f"ScriptedChatModel: no step left for {key!r}; shown: {_summary_messages(messages)}")
            return steps.pop(0)
    raise AssertionError(f"ScriptedChatModel: no route matches; shown: {_summary_messages(messages)}")


def stream_chunks(msg: AIMessage) -> Iterator[AIMessageChunk]:
    """Split an AIMessage the way providers stream it; merging the chunks gives it back."""
    content = msg.content
    pieces = re.findall(r"\s*\S+|\s+", content) if isinstance(content, str) else [content]
    # Reasoning (additional_kwargs) leads, like DeepSeek streams reasoning_content first.
    first = {"additional_kwargs": copy.deepcopy(msg.additional_kwargs)}
    for piece in pieces:
        yield AIMessageChunk(content=piece, id=msg.id, **first)
        first = {}
    for index, call in enumerate(_raw_calls(msg)):
        yield AIMessageChunk(content="", id=msg.id, tool_call_chunks=[{**call, "index": index}],
                             **first)
        first = {}
    yield AIMessageChunk(content="", id=msg.id, usage_metadata=msg.usage_metadata,
                         response_metadata=copy.deepcopy(msg.response_metadata),
                         chunk_position="last", **first)


def _raw_calls(msg: AIMessage) -> Iterator[dict]:
    """Tool calls as (name, args-string, id); invalid ones keep their unparsable args."""
    for call in msg.tool_calls:
        yield {"name": call["name"], "args": json.dumps(call["args"]), "id": call["id"]}
    for bad in msg.invalid_tool_calls:
        yield {"name": bad.get("name"), "args": bad.get("args"), "id": bad.get("id")}


def _with_call_ids(step: Any, index: int) -> Any:
    """Give id-less tool calls stable ids (`call_<step>_<n>`) so ToolMessages can refer to them."""
    if not isinstance(step, AIMessage):
        return step
    every = [*step.tool_calls, *step.invalid_tool_calls]
    if all(c.get("id") for c in every):
        return step
    ids = [c.get("id") or f"call_{index}_{n}" for n, c in enumerate(every)]
    split = len(step.tool_calls)
    return step.model_copy(update={
        "tool_calls": [{**c, "id": i} for c, i in zip(step.tool_calls, ids[:split])],
        "invalid_tool_calls": [{**c, "id": i} for c, i in zip(step.invalid_tool_calls, ids[split:])]})


def _with_finish_reason(step: Any) -> Any:
    """What a provider sends unless the step says otherwise; None means none was sent. The model
    speaks OpenAI's protocol, as langchain-openai marks it (``model_provider``): a stream without a
    finish reason was cut (``paicli.nodes.guards.cutoff``)."""
    if not isinstance(step, AIMessage):
        return step
    metadata = {"model_provider": "openai", **step.response_metadata}
    if "finish_reason" not in metadata:
        metadata["finish_reason"] = "tool_calls" if step.tool_calls or step.invalid_tool_calls else "stop"
    elif metadata["finish_reason"] is None:
        del metadata["finish_reason"]
    return step.model_copy(update={"response_metadata": metadata})


def _summary(step: Any) -> str:
    if isinstance(step, BaseException):
        return f"raise {step!r}"
    names = [c["name"] for c in step.tool_calls]
    return f"AI({str(step.content)[:40]!r}{', calls=' + str(names) if names else ''})"


def _summary_messages(messages: Sequence[BaseMessage], last: int = 4) -> str:
    shown = [f"{m.type}: {str(m.content)[:60]!r}" for m in messages[-last:]]
    return f"{len(messages)} message(s), last: [" + ", ".join(shown) + "]"
