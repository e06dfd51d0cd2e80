"""One run driver for every mode (issue 25): a ReAct turn and a Plan or Team run go through
:func:`drive`. It holds the session's turn lock, streams the graph, hands what streams by to a
watcher, answers the interrupts the graph stopped on and resumes it with ``Command(resume)``
until it ends. What differs between modes is only what the watcher does with what it sees
(:class:`TurnWatcher` for the conversation, :class:`UnitWatcher` for a run of units) and how
interrupts are answered (one question each, or ``paicli.run.answers.Answers`` with the plan review).
A ReAct turn is :func:`run_turn` here; a Plan or Team run is ``paicli.run.mode_run.ModeRun``.

Graph steps are saved before the next one starts (``durability="sync"``), so a killed process
loses at most the graph step that was running.
"""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, Awaitable, Callable, Iterator, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langgraph.types import Command

from paicli.memory.tokens import text_of
from paicli.run.answers import ask_audited
from paicli.run.result import COMPLETED, FAILED, RunResult, Usage

Answer = Callable[[list[Any]], Awaitable[dict[str, Any]]]


class TurnUI(Protocol):
    def token(self, text: str) -> None: ...
    def notice(self, text: str) -> None: ...
    def diagnostics(self, lines: list[str]) -> None: ...
    def waiting(self, text: str = ...) -> None: ...
    def discard_stream(self) -> None: ...
    def model_message(self, message: AIMessage) -> None: ...
    def tool_results(self, messages: list[ToolMessage]) -> None: ...
    async def approve(self, request: dict[str, Any]) -> Any: ...


class Conversation(Protocol):
    """What a ReAct turn reads of the session (``paicli.run.session.Session``, which imports this module)."""

    graph: Any
    deps: Any
    mcp: Any  # paicli.tools.mcp.servers.McpServers, or None
    usage: Usage  # the session's model calls so far (every mode's)
    external_sources: tuple[str, ...]
    settings: Any  # paicli.config.settings.Settings: the model's vision, the project root (images)

    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def context(self) -> Any: ...
    def remember(self) -> None: ...
    def turn_lock(self, notice: Callable[[str], None] | None = None) -> AbstractAsyncContextManager[Any]: ...


class Watcher(Protocol):
    stream_modes: list[str]

    def on_token(self, chunk: Any, meta: dict[str, Any]) -> None: ...
    def on_custom(self, data: dict[str, Any], namespace: tuple[str, ...] = ()) -> None: ...
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


async def servers_started(session: Any) -> None:
    """Before a run in any mode: MCP servers still starting get the startup wait (reference x),
    and the MCP index follows the ready set (q.2 item 9), so a Plan task or Team step sees the
    same tools a ReAct turn would."""
    if session.mcp is not None:
        await session.mcp.wait_started()
        session.deps.mcp_index = await session.mcp_index.refresh(session.mcp)


async def run_turn(session: Conversation, text: str, ui: TurnUI) -> RunResult:
    """One ReAct turn of ``session``: the user's message, then :func:`drive` under its turn lock.
    Its status is ``failed`` when the model call failed for good (``detail`` says why), else
    ``completed`` (an empty answer too: the front ends say so)."""
    result, started = RunResult(), time.monotonic()
    session.remember()
    await servers_started(session)
    pending: Any = {"messages": await user_messages(session.mcp, text, ui, image_content(session, text, ui))}

    async def answer(interrupts: list[Any]) -> dict[str, Any]:
        return {i.id: await ask_audited(ui, i.value, session.deps.audit, session.deps.tools) for i in interrupts}

    with counted(session, result):
        await drive(session.graph, pending, session.config, session.context, TurnWatcher(session, ui, result),
                    answer, session.turn_lock(ui.notice))
    result.status = result.status or COMPLETED
    result.seconds = time.monotonic() - started
    return result


@contextmanager
def counted(session: Any, result: RunResult) -> Iterator[None]:
    """The run's model calls join the session's (``/memory``'s token statistics), in any mode and
    however the run ends (a cancelled one's calls were made too)."""
    try:
        yield
    finally:
        session.usage += result.usage


def image_content(session: Any, text: str, ui: TurnUI) -> Any:
    """The user's message content with the images it attaches (``paicli.run.image_input``, issue 39)."""
    from paicli.run.image_input import attach

    settings = session.settings
    content, notes = attach(text, settings.project_root, settings.model_info.vision, settings.model)
    for note in notes:
        ui.notice(note)
    return content


async def user_messages(mcp: Any, text: str, ui: TurnUI, content: Any = None) -> list[Any]:
    """The user's message as typed (``content``: with its images), then the MCP resources it
    mentions (``paicli.tools.mcp.mentions``)."""
    content = text if content is None else content
    if mcp is None:  # no servers: a mention is just text, and no MCP module is imported
        return [HumanMessage(content)]
    from paicli.tools.mcp.mentions import expand, expansion_message

    expansion = await expand(text, mcp)
    for warning in expansion.warnings:
        ui.notice(warning)
    resources = expansion_message(expansion)
    return [HumanMessage(content), *([resources] if resources else [])]


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
            watcher.on_custom(data, namespace)
        else:
            for node, update in data.items():
                if node == "__interrupt__":
                    found.update({i.id: i for i in update})
                elif isinstance(update, dict):
                    watcher.on_update(namespace, node, update)
    return list(found.values())


class TurnWatcher:
    """A ReAct turn: the answer's tokens as they come, notices, each model message and tool
    result; the answer, the failure and every model call's usage in ``result``; the external
    content read so far on the session."""

    stream_modes = ["messages", "updates", "custom"]

    def __init__(self, session: Conversation, ui: TurnUI, result: RunResult):
        self.session, self.ui, self.result = session, ui, result

    def on_token(self, chunk: Any, meta: dict[str, Any]) -> None:
        if not isinstance(chunk, AIMessageChunk) or meta.get("langgraph_node") != "call_model":
            return
        reasoning = chunk.additional_kwargs.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning and hasattr(self.ui, "reasoning"):
            self.ui.reasoning(reasoning)  # issue 39: shown as it arrives, dimmed (paicli.ui.thinking)
        if chunk.content:
            self.ui.token(text_of(chunk))

    def on_custom(self, data: dict[str, Any], namespace: tuple[str, ...] = ()) -> None:
        if data.get("discard_stream"):  # a retried answer comes whole: what streamed was not it
            self.ui.discard_stream()
        if data.get("notice"):
            self.ui.notice(data["notice"])
        if data.get("lsp"):  # nodes/diagnostics.py: the 🩺 lines of an edit
            self.ui.diagnostics(list(data["lsp"]))
        if data.get("waiting"):  # a retry waits: the spinner comes back (issue 41)
            self.ui.waiting()

    def on_update(self, namespace: tuple[str, ...], node: str, update: dict[str, Any]) -> None:
        ui, result = self.ui, self.result
        if node == "call_model":
            if update.get("error"):
                result.status, result.detail = FAILED, update["error"]
            for message in update.get("messages") or []:
                if isinstance(message, AIMessage):
                    self._count(message)
                    ui.model_message(message)
        elif node == "execute_tools":
            ui.tool_results([m for m in update.get("messages") or [] if isinstance(m, ToolMessage)])
        if "external_sources" in update:  # execute_tools, or prepare_turn for a mentioned resource
            self.session.external_sources = tuple(update["external_sources"] or ())

    def _count(self, message: AIMessage) -> None:
        self.result.usage += Usage.of_call(message.usage_metadata)
        if not message.tool_calls and not message.invalid_tool_calls:
            self.result.answer = text_of(message)


def unit_line(text: str, unit: str | None) -> str:
    """``text`` with the unit's id after its indentation, as the unit's tool calls are shown;
    as it is when it names the unit already (a Team step's own lines: ``✅ 步骤 [step_1] 审查通过``)."""
    if unit is None or f"[{unit}]" in text:
        return text
    body = text.lstrip(" ")
    return f"{text[:len(text) - len(body)]}[{unit}] {body}"


class UnitWatcher:
    """A run of units (Plan, Team): a unit's node announces its id with the namespace its
    subgraph streams under (``graphs/unit.py``); each unit's tool calls and results are shown as
    ReAct's, prefixed with its id; the running units feed one live status line; every model call
    of the run (planner, units, reviewers) counts in ``result``."""

    stream_modes = ["updates", "custom"]

    def __init__(self, ui: Any, result: RunResult, role: str = "plan"):
        self.ui, self.result, self.role = ui, result, role  # role: whose reasoning a unit's is (paicli.ui.thinking)
        self.units: dict[str, str] = {}  # a unit's namespace (its node's checkpoint_ns) -> its id

    def _reasoning(self, message: AIMessage, unit: str) -> None:
        reasoning = message.additional_kwargs.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning.strip() and hasattr(self.ui, "reasoning_block"):
            from paicli.ui.thinking import label_for

            self.ui.reasoning_block(reasoning, label_for(self.role, unit))

    def on_token(self, chunk: Any, meta: dict[str, Any]) -> None:
        """Not streamed: a run shows its units' messages whole."""

    def on_custom(self, data: dict[str, Any], namespace: tuple[str, ...] = ()) -> None:
        ui, unit = self.ui, self.units.get(namespace[0]) if namespace else None
        if data.get("notice"):
            ui.notice(unit_line(data["notice"], unit))  # a unit's own notice (its call refused...) names it
            ui.waiting()  # the units work on after a notice: the live status line comes back
        if data.get("lsp"):  # a unit's own edits' 🩺 lines, with its id
            ui.diagnostics([unit_line(line, unit) for line in data["lsp"]])
            ui.waiting()
        if data.get("unit") and data.get("ns"):  # a unit starts (or resumes)
            self.units[str(data["ns"])] = str(data["unit"])
            if data["unit"] not in ui.run_line.running:
                ui.run_line.running.append(str(data["unit"]))
        if "browser_wait" in data and unit is not None:  # issue 40: waiting for the browser, or not any more
            ui.run_line.waiting.pop(unit, None)
            if data["browser_wait"]:
                ui.run_line.waiting[unit] = str(data["browser_wait"])
        if isinstance(data.get("usage"), dict):  # a model call outside any unit (the Plan planner)
            self.result.usage += Usage.of_call(data["usage"])
        if isinstance(data.get("reasoning"), str) and hasattr(ui, "reasoning_block"):  # a planner's or reviewer's
            from paicli.ui.thinking import label_for

            ui.reasoning_block(data["reasoning"], label_for(str(data.get("role") or "planner"), data.get("name")))

    def on_update(self, namespace: tuple[str, ...], node: str, update: dict[str, Any]) -> None:
        ui, unit = self.ui, self.units.get(namespace[0]) if namespace else None
        messages = list(update.get("messages") or [])
        for message in messages:
            if isinstance(message, AIMessage) and message.usage_metadata:
                self.result.usage += Usage.of_call(message.usage_metadata)
        if unit is None:
            if isinstance(update.get("results"), dict):  # a unit finished: it leaves the status line
                ui.run_line.running = [u for u in ui.run_line.running if u not in update["results"]]
                for finished in update["results"]:
                    ui.run_line.waiting.pop(finished, None)
            return
        if node == "call_model":
            for message in messages:
                if isinstance(message, AIMessage):
                    ui.run_line.calls += len(message.tool_calls) + len(message.invalid_tool_calls)
                    self._reasoning(message, unit)
                    ui.model_message(message, unit=unit)
        elif node == "execute_tools":
            ui.tool_results([m for m in messages if isinstance(m, ToolMessage)], unit=unit)
