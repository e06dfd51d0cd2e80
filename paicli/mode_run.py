"""Running a Plan (or Team) graph for a session: the CLI side the two modes share.

- **Where it lives.** The mode's graph is compiled over the session's ledger under a namespace
  of its own (``memory.ledger.namespaced``): a run belongs to the session (same file, the same
  turn lock), its lines say ``mode: plan`` and ``actor: planner`` (the graph) or
  ``task:<id>`` (``graphs/unit.py``), and the ReAct conversation is not touched.
- **Interrupts.** A run may stop on several at once (parallel tasks asking for approval, or the
  plan review). They are answered one at a time (``paicli.answers``) and resumed together.
- **Unfinished runs.** A run cut short (Ctrl-C, ``kill -9``) is still pending in the ledger:
  ``unfinished`` says so and ``run(None, …)`` finishes it; LangGraph re-runs only the tasks that
  had not finished, each from its last checkpoint (Q11).
- **Handoff (Q20).** A finished run leaves the goal and its result in the ReAct conversation, so
  a follow-up question can refer to them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import StateGraph
from langgraph.types import Command

from memory.ledger.namespaced import NamespacedSaver
from nodes.support.state import Deps
from paicli.answers import Answers

HANDOFF_CHARS = 4000  # Q20: the result left in the ReAct conversation, cut to this
CANCELLED_STATUS = "cancelled"


@dataclass
class RunResult:
    answer: str = ""
    status: str = ""  # completed | partial | failed | cancelled
    seconds: float = 0.0

    @property
    def completed(self) -> bool:
        return self.status == "completed"


@dataclass(frozen=True)
class ModeSpec:
    """A mode the CLI can run: its graph builder and the actor of its own (non-unit) lines."""

    build: Callable[[Deps], StateGraph]
    actor: str


class ModeRun:
    def __init__(self, session: Any, mode: str, spec: ModeSpec):
        self.session, self.mode, self.spec = session, mode, spec
        saver = NamespacedSaver(session.checkpointer, mode)
        self.graph = spec.build(session.deps).compile(checkpointer=saver, store=session.store, name=mode)

    @property
    def config(self) -> dict[str, Any]:
        return {**self.session.config, "metadata": {"mode": self.mode, "actor": self.spec.actor}}

    async def unfinished(self) -> bool:
        return bool((await self.graph.aget_state(self.config)).next)

    async def run(self, text: str | None, ui: Any, *, review: bool) -> RunResult:
        """``text`` None: finish the unfinished run."""
        started, answers = time.monotonic(), Answers(ui)
        pending: Any = {"messages": [HumanMessage(text)]} if text is not None else None
        context = self.session.mode_context(self.mode, review=review)
        async with self.session.turn_lock(ui.notice):
            while True:
                interrupts = await self._stream(pending, context, ui)
                if not interrupts:
                    break
                pending = Command(resume=await answers.answer_all(interrupts))
            values = (await self.graph.aget_state(self.config)).values
            result = RunResult(values.get("outcome") or "", values.get("status") or "", time.monotonic() - started)
            if result.answer and result.status != CANCELLED_STATUS:
                await self.handoff(values.get("submitted") or text or "", result.answer)
        return result

    async def _stream(self, graph_input: Any, context: Any, ui: Any) -> list[Any]:
        found: dict[str, Any] = {}
        async for _ns, mode, data in self.graph.astream(graph_input, self.config, context=context,
                                                        stream_mode=["updates", "custom"], subgraphs=True,
                                                        durability="sync"):
            if mode == "custom":
                if isinstance(data, dict) and data.get("notice"):
                    ui.notice(data["notice"])
                continue
            for interrupt in data.get("__interrupt__", ()) if isinstance(data, dict) else ():
                found[interrupt.id] = interrupt
        return list(found.values())

    async def handoff(self, goal: str, answer: str) -> None:
        """Q20: the goal and the result, as a user/assistant pair of the ReAct conversation."""
        text = answer if len(answer) <= HANDOFF_CHARS else answer[:HANDOFF_CHARS] + "…"
        update = {"messages": [HumanMessage(goal), AIMessage(text)]}
        # as_node="extract_facts": the pair reads as a finished turn, nothing left to run.
        await self.session.graph.aupdate_state(self.session.config, update, as_node="extract_facts")
