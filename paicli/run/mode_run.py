"""Running a Plan (or Team) graph for a session: the CLI side the two modes share. The run
itself goes through the driver every mode shares (``paicli.run.driver``).

- **Where it lives.** The mode's graph is compiled over the session's ledger under a namespace
  of its own (``paicli.memory.ledger.namespaced``): a run belongs to the session (same file, the same
  turn lock), its lines say ``mode: plan`` and ``actor: planner`` (the graph) or
  ``task:<id>`` (``graphs/unit.py``), and the ReAct conversation is not touched.
- **Interrupts.** A run may stop on several at once (parallel tasks asking for approval, or the
  plan review). They are answered one at a time (``paicli.run.answers``) and resumed together.
- **Unfinished runs.** A run cut short (Ctrl-C, ``kill -9``) is still pending in the ledger:
  ``unfinished`` says so and ``run(None, …)`` finishes it; LangGraph re-runs only the tasks that
  had not finished, each from its last checkpoint (Q11).
- **What the units do (issue 26).** ``paicli.run.driver.UnitWatcher``: each task's or step's tool
  calls and failed results are shown as ReAct's, prefixed with its id, the running units feed one
  live status line, and every model call of the run counts in the closing token line.
- **Handoff (Q20).** A finished run leaves the goal and its result in the ReAct conversation, so
  a follow-up question can refer to them.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from paicli.memory.ledger.namespaced import NamespacedSaver
from paicli.run.answers import Answers
from paicli.run.driver import UnitWatcher, counted, drive, servers_started
from paicli.run.result import CANCELLED, RunResult
from paicli.modes import ModeSpec
from paicli.ui.render import RunLine

HANDOFF_CHARS = 4000  # Q20: the result left in the ReAct conversation, cut to this


class ModeRun:
    def __init__(self, session: Any, spec: ModeSpec):
        self.session, self.mode, self.spec = session, spec.name, spec
        saver = NamespacedSaver(session.checkpointer, self.mode)
        self.graph = spec.build(session.deps).compile(checkpointer=saver, store=session.store, name=self.mode)

    @property
    def config(self) -> dict[str, Any]:
        return {**self.session.config, "metadata": {"mode": self.mode, "actor": self.spec.actor}}

    async def unfinished(self) -> bool:
        return bool((await self.graph.aget_state(self.config)).next)

    async def run(self, text: str | None, ui: Any, *, review: bool) -> RunResult:
        """``text`` None: finish the unfinished run."""
        started, answers, result = time.monotonic(), Answers(ui, self.session.deps.audit, self.session.deps.tools), RunResult()
        pending: Any = {"messages": [HumanMessage(text)]} if text is not None else None
        context = self.session.mode_context(self.mode, review=review)
        ui.run_line = RunLine()
        self.session.remember()
        await servers_started(self.session)

        async def finish() -> None:
            values = (await self.graph.aget_state(self.config)).values
            result.answer, result.status = values.get("outcome") or "", values.get("status") or ""
            result.detail, result.seconds = values.get("error") or "", time.monotonic() - started
            if result.answer and result.status != CANCELLED:
                await self.handoff(values.get("submitted") or text or "", result.answer)

        watcher = UnitWatcher(ui, result, "team-worker" if self.mode == "team" else "plan")
        with counted(self.session, result):
            await drive(self.graph, pending, self.config, context, watcher, answers.answer_all,
                        self.session.turn_lock(ui.notice), finish)
        return result

    async def handoff(self, goal: str, answer: str) -> None:
        """Q20: the goal and the result, as a user/assistant pair of the ReAct conversation."""
        text = answer if len(answer) <= HANDOFF_CHARS else answer[:HANDOFF_CHARS] + "…"
        update = {"messages": [HumanMessage(goal), AIMessage(text)]}
        # as_node="extract_facts": the pair reads as a finished turn, nothing left to run.
        await self.session.graph.aupdate_state(self.session.config, update, as_node="extract_facts")
