"""One run driver for every mode (issue 25): a ReAct turn and a Plan or Team run go through
:func:`drive`. It holds the session's turn lock, streams the graph, hands what streams by to a
watcher, answers the interrupts the graph stopped on and resumes it with ``Command(resume)``
until it ends. What differs between modes is only what the watcher does with what it sees
(:class:`TurnWatcher` for the conversation, :class:`UnitWatcher` for a run of units) and how
interrupts are answered (one question each, or ``paicli.answers.Answers`` with the plan review).

Steps are saved before the next one starts (``durability="sync"``), so a killed process loses at
most the step that was running.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Awaitable, Callable, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langgraph.types import Command

from memory.tokens import text_of

Answer = Callable[[list[Any]], Awaitable[dict[str, Any]]]


class Watcher(Protocol):
    stream_modes: list[str]

    def on_token(self, chunk: Any, meta: dict[str, Any]) -> None: ...
    def on_custom(self, data: dict[str, Any]) -> None: ...
    def on_update(self, namespace: tuple[str, ...], node: str, update: dict[str, Any]) -> None: ...


async def drive(graph: Any, graph_input: Any, config: dict[str, Any], context: Any, watcher: Watcher,
                answer: Answer, lock: AbstractAsyncContextManager[Any],
                finish: Callable[[], Awaitable[None]] | None = None) -> None:
    """Run ``graph`` from ``graph_input`` (None: finish the pending run) to its end, then
    ``finish``, all under ``lock``."""
    pending = graph_input
    async with lock:
        while True:
            interrupts = await _stream(graph, pending, config, context, watcher)
            if not interrupts:
                break
            pending = Command(resume=await answer(interrupts))
        if finish is not None:
            await finish()


async def _stream(graph: Any, graph_input: Any, config: dict[str, Any], context: Any, watcher: Watcher) -> list[Any]:
    found: dict[str, Any] = {}
    async for namespace, mode, data in graph.astream(graph_input, config, context=context,
                                                     stream_mode=watcher.stream_modes, subgraphs=True,
                                                     durability="sync"):
        if mode == "messages":
            watcher.on_token(*data)
        elif not isinstance(data, dict):
            continue
        elif mode == "custom":
            watcher.on_custom(data)
        else:
            for node, update in data.items():
                if node == "__interrupt__":
                    found.update({i.id: i for i in update})
                elif isinstance(update, dict):
                    watcher.on_update(namespace, node, update)
    return list(found.values())


def count_usage(usage: dict[str, Any], result: Any) -> int:
    """Add one model call's usage to ``result`` (a ``TurnResult`` or ``RunResult``); its cached tokens."""
    cached = (usage.get("input_token_details") or {}).get("cache_read") or 0
    result.model_calls += 1
    result.input_tokens += usage.get("input_tokens", 0)
    result.output_tokens += usage.get("output_tokens", 0)
    result.cached_tokens += cached
    return cached


class TurnWatcher:
    """A ReAct turn: the answer's tokens as they come, notices, each model message and tool
    result; the turn's counts in ``result`` and the session's ``stats``; the external content
    read so far on the session."""

    stream_modes = ["messages", "updates", "custom"]

    def __init__(self, session: Any, ui: Any, result: Any):
        self.session, self.ui, self.result = session, ui, result

    def on_token(self, chunk: Any, meta: dict[str, Any]) -> None:
        if isinstance(chunk, AIMessageChunk) and meta.get("langgraph_node") == "call_model" and chunk.content:
            self.ui.token(text_of(chunk))

    def on_custom(self, data: dict[str, Any]) -> None:
        if data.get("notice"):
            self.ui.notice(data["notice"])

    def on_update(self, namespace: tuple[str, ...], node: str, update: dict[str, Any]) -> None:
        ui, result = self.ui, self.result
        if node == "call_model":
            if update.get("error"):
                result.error = update["error"]
            for message in update.get("messages") or []:
                if isinstance(message, AIMessage):
                    self._count(message)
                    ui.model_message(message)
        elif node == "execute_tools":
            ui.tool_results([m for m in update.get("messages") or [] if isinstance(m, ToolMessage)])
        if "external_sources" in update:  # execute_tools, or prepare_turn for a mentioned resource
            self.session.external_sources = tuple(update["external_sources"] or ())

    def _count(self, message: AIMessage) -> None:
        usage, result, stats = message.usage_metadata or {}, self.result, self.session.stats
        cached = count_usage(usage, result)
        stats.calls += 1
        stats.input += usage.get("input_tokens", 0)
        stats.output += usage.get("output_tokens", 0)
        stats.cached += cached
        result.tool_calls += len(message.tool_calls) + len(message.invalid_tool_calls)
        if not message.tool_calls and not message.invalid_tool_calls:
            result.answer = text_of(message)


class UnitWatcher:
    """A run of units (Plan, Team): a unit's node announces its id with the namespace its
    subgraph streams under (``graphs/unit.py``); each unit's tool calls and results are shown as
    ReAct's, prefixed with its id; the running units feed one live status line; every model call
    of the run (planner, units, reviewers) counts in ``result``."""

    stream_modes = ["updates", "custom"]

    def __init__(self, ui: Any, result: Any):
        self.ui, self.result = ui, result
        self.units: dict[str, str] = {}  # a unit's namespace (its node's checkpoint_ns) -> its id

    def on_token(self, chunk: Any, meta: dict[str, Any]) -> None:
        """Not streamed: a run shows its units' messages whole."""

    def on_custom(self, data: dict[str, Any]) -> None:
        ui = self.ui
        if data.get("notice"):
            ui.notice(data["notice"])
        if data.get("unit") and data.get("ns"):  # a unit starts (or resumes)
            self.units[str(data["ns"])] = str(data["unit"])
            if data["unit"] not in ui.run_line.running:
                ui.run_line.running.append(str(data["unit"]))
        if isinstance(data.get("usage"), dict):  # a model call outside any unit (the Plan planner)
            count_usage(data["usage"], self.result)

    def on_update(self, namespace: tuple[str, ...], node: str, update: dict[str, Any]) -> None:
        ui, unit = self.ui, self.units.get(namespace[0]) if namespace else None
        messages = list(update.get("messages") or [])
        for message in messages:
            if isinstance(message, AIMessage) and message.usage_metadata:
                count_usage(message.usage_metadata, self.result)
        if unit is None:
            if isinstance(update.get("results"), dict):  # a unit finished: it leaves the status line
                ui.run_line.running = [u for u in ui.run_line.running if u not in update["results"]]
            return
        if node == "call_model":
            for message in messages:
                if isinstance(message, AIMessage):
                    ui.run_line.calls += len(message.tool_calls) + len(message.invalid_tool_calls)
                    ui.model_message(message, unit=unit)
        elif node == "execute_tools":
            ui.tool_results([m for m in messages if isinstance(m, ToolMessage)], unit=unit)
