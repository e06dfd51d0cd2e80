"""A session: settings, the compiled graph, one thread, and the turn runner the REPL and
``-p`` share.

``run_turn`` streams the graph (tokens, node updates), hands approval interrupts to the UI and
resumes with its answers, and returns what the turn produced. Heavy imports (LangGraph, the
model client) happen here, so the CLI can show its prompt before they finish.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.react import build_react
from nodes.state import Deps, RunContext
from paicli.models import make_chat_model
from paicli.settings import Settings

RECURSION_LIMIT = 10_000  # reference s.2.9: no iteration cap; this only stops a runaway graph


def new_session_id() -> str:
    """reference h.1: ``session-<epoch millis>-<uuid>``."""
    return f"session-{int(time.time() * 1000)}-{uuid.uuid4()}"


class TurnUI(Protocol):
    def token(self, text: str) -> None: ...
    def model_message(self, message: AIMessage) -> None: ...
    def tool_results(self, messages: list[ToolMessage]) -> None: ...
    async def approve(self, request: dict[str, Any]) -> Any: ...


@dataclass
class TurnResult:
    answer: str = ""
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    seconds: float = 0.0
    tool_calls: int = 0


@dataclass
class Session:
    settings: Settings
    approval: str = "auto"
    session_id: str = field(default_factory=new_session_id)
    deps: Deps | None = None
    checkpointer: Any = None

    def __post_init__(self) -> None:
        if self.deps is None:
            self.deps = Deps(model=make_chat_model(self.settings), prompt_home=self.settings.home)
        self.checkpointer = self.checkpointer or InMemorySaver()
        builder, self.compaction = build_react(self.deps)
        self.graph = builder.compile(checkpointer=self.checkpointer, name="react")

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.session_id}, "recursion_limit": RECURSION_LIMIT}

    @property
    def context(self) -> RunContext:
        return RunContext(
            project_root=str(self.settings.project_root),
            session_id=self.session_id,
            approval=self.approval,
            context_window=self.settings.context_window,
        )

    def switch_model(self, model: str) -> None:
        self.settings = self.settings.with_model(model)
        self.deps.model = make_chat_model(self.settings)

    async def run_turn(self, text: str, ui: TurnUI) -> TurnResult:
        result, started = TurnResult(), time.monotonic()
        pending: Any = {"messages": [HumanMessage(text)]}
        while pending is not None:
            interrupts = await self._stream(pending, ui, result)
            pending = Command(resume={i.id: await ui.approve(i.value) for i in interrupts}) if interrupts else None
        result.seconds = time.monotonic() - started
        return result

    async def _stream(self, graph_input: Any, ui: TurnUI, result: TurnResult) -> list[Any]:
        interrupts: dict[str, Any] = {}
        stream = self.graph.astream(
            graph_input, self.config, context=self.context, stream_mode=["messages", "updates"], subgraphs=True
        )
        async for _namespace, mode, data in stream:
            if mode == "messages":
                chunk, meta = data
                if isinstance(chunk, AIMessageChunk) and meta.get("langgraph_node") == "call_model" and chunk.content:
                    ui.token(chunk.text if hasattr(chunk, "text") else str(chunk.content))
                continue
            for node, update in data.items():
                if node == "__interrupt__":
                    interrupts.update({i.id: i for i in update})
                elif isinstance(update, dict):
                    self._on_update(node, update, ui, result)
        return list(interrupts.values())

    def _on_update(self, node: str, update: dict[str, Any], ui: TurnUI, result: TurnResult) -> None:
        if node == "call_model":
            if update.get("error"):
                result.error = update["error"]
            for message in update.get("messages") or []:
                if isinstance(message, AIMessage):
                    self._count(message, result)
                    ui.model_message(message)
        elif node == "execute_tools":
            ui.tool_results([m for m in update.get("messages") or [] if isinstance(m, ToolMessage)])

    @staticmethod
    def _count(message: AIMessage, result: TurnResult) -> None:
        usage = message.usage_metadata or {}
        result.model_calls += 1
        result.input_tokens += usage.get("input_tokens", 0)
        result.output_tokens += usage.get("output_tokens", 0)
        result.tool_calls += len(message.tool_calls) + len(message.invalid_tool_calls)
        if not message.tool_calls and not message.invalid_tool_calls:
            result.answer = message.text if hasattr(message, "text") else str(message.content)
