"""Running the react graph the way the CLI does, and the tool-call pairing invariant."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from paicli.graphs.react import build_graph
from paicli.nodes.core.state import Deps, RunContext
from tests.support.scripted_model import ScriptedChatModel
from paicli.tools.base import ToolSpec


def assert_paired(messages: list[Any]) -> None:
    """No assistant tool call without its result, no result without its call, results right
    after their call (what every provider checks)."""
    pending: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in pending, f"tool result without a call: {message.tool_call_id}"
            pending.remove(message.tool_call_id)
            continue
        assert not pending, f"calls left without results before a {type(message).__name__}: {pending}"
        if isinstance(message, AIMessage):
            pending = {c["id"] for c in [*message.tool_calls, *message.invalid_tool_calls]}
    assert not pending, f"calls left without results at the end: {pending}"


class Harness:
    def __init__(self, model: ScriptedChatModel, project, approval: str = "yes", window: int = 128_000, **deps: Any):
        self.model = model
        self.graph = build_graph(Deps(model=model, **deps), checkpointer=InMemorySaver())
        self.config = {"configurable": {"thread_id": "t1"}}
        self.context = RunContext(project_root=str(project), approval=approval, context_window=window, session_id="s1")
        self.interrupts: list[Any] = []
        self.notices: list[str] = []

    async def send(self, graph_input: Any) -> list[Any]:
        """Run until the graph stops; return the interrupts it stopped on."""
        found: dict[str, Any] = {}
        async for _ns, _mode, data in self.graph.astream(
            graph_input, self.config, context=self.context, stream_mode=["updates", "custom"], subgraphs=True
        ):
            if _mode == "custom":
                if "notice" in data:  # other events: a unit starting, the planner's token usage
                    self.notices.append(data["notice"])
                continue
            for i in data.get("__interrupt__", ()):
                found[i.id] = i
        self.interrupts = list(found.values())
        return self.interrupts

    async def turn(self, text: str) -> list[Any]:
        return await self.send({"messages": [HumanMessage(text)]})

    async def resume(self, answer: Any) -> list[Any]:
        return await self.send(Command(resume={i.id: answer for i in self.interrupts}))

    async def messages(self) -> list[Any]:
        return (await self.graph.aget_state(self.config)).values["messages"]

    def check_prompts(self) -> None:
        """Every request the agent made (summary requests have no tools and are skipped)."""
        for prompt, tools in zip(self.model.seen, self.model.seen_tools):
            if tools:
                assert_paired(prompt[1:])


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return root


def slow_tool(runs: list[str], seconds: float = 5.0) -> ToolSpec:
    """A tool named ``slow`` that records each run in ``runs`` and then takes ``seconds``: a
    run cut short while it is running is a crash inside execute_tools (Q11)."""

    async def slow(args: dict[str, Any], ctx: Any) -> str:
        runs.append("slow")
        await asyncio.sleep(seconds)
        return "slow done"

    return ToolSpec("slow", "一个很慢的工具", {"type": "object", "properties": {}}, slow, is_async=True)
