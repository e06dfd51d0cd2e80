"""Running the Plan graph the way the CLI does, for the plan graph tests."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from paicli.graphs.plan import build_graph
from paicli.nodes.core.state import Deps, RunContext
from tests.graphs.conftest import Harness, assert_paired
from tests.support.scripted_model import ScriptedChatModel, ai

PLANNING = "请为以下任务制定执行计划"


def plan_json(*tasks: tuple, summary: str = "摘要") -> Any:
    """tasks: (id, description, dependencies[, type])."""
    items = [{"id": t[0], "description": t[1], "type": t[3] if len(t) > 3 else "ANALYSIS", "dependencies": list(t[2])}
             for t in tasks]
    return ai("```json\n" + json.dumps({"summary": summary, "tasks": items}, ensure_ascii=False) + "\n```")


def task_key(description: str) -> str:
    return f"当前任务：{description}"


def top_level_write(saver: InMemorySaver, text: str) -> bool:
    """A node of the top graph (a finished task, not a step inside its subgraph) has saved a write
    mentioning ``text``: what a resumed run reads instead of running that node again."""
    needle = text.encode("utf-8")
    return any(needle in bytes(value[1]) for (_, namespace, _), writes in list(saver.writes.items()) if namespace == ""
               for _, _, value, _ in list(writes.values()))


class PlanHarness(Harness):
    """The react Harness's streaming and answers, over the Plan graph."""

    def __init__(self, model: ScriptedChatModel, project, *, approval: str = "yes", review: bool = False,
                 max_replans: int = 2, checkpointer: Any = None, **deps: Any):
        self.model = model
        self.checkpointer = checkpointer or InMemorySaver()
        self.graph = build_graph(Deps(model=model, **deps), checkpointer=self.checkpointer)
        self.config = {"configurable": {"thread_id": "p1"}}
        self.context = RunContext(project_root=str(project), approval=approval, session_id="s1", mode="plan",
                                  review=review, max_replans=max_replans)
        self.interrupts: list[Any] = []
        self.notices: list[str] = []

    async def run(self, goal: str) -> list[Any]:
        return await self.send({"messages": [HumanMessage(goal)]})

    async def resume(self, answers: dict[str, Any]) -> list[Any]:
        return await self.send(Command(resume=answers))

    async def values(self) -> dict[str, Any]:
        return (await self.graph.aget_state(self.config)).values

    async def outcome(self) -> str:
        return (await self.values()).get("outcome", "")

    def check_prompts(self) -> None:
        """Every request with tools (a task's) kept calls and results paired."""
        assert self.model.seen
        for prompt, tools in zip(self.model.seen, self.model.seen_tools):
            if tools:
                assert_paired(prompt[1:])

    def prompts_for(self, key: str) -> list[list[Any]]:
        return [p for p in self.model.seen if any(key in str(m.content) for m in p if m.type == "human")]
