"""One execution unit as a ``Send`` target: the agent loop on a message list of its own.

A Plan task (and a Team member) is the same loop as the ReAct conversation (``graphs/loop.py``:
compaction, the turn policy, approvals as interrupts, offload, budgets, the runaway guard), with
the same context assembly (the ``load_context`` node), wired flat inside a small graph of its
own: ``unit_start → load_context → (agent loop) → unit_finish``.

``make_unit_node`` wraps the compiled unit for the parent graph. The parent sends it one
payload per unit (``nodes.unit.UnitInput``); the unit runs as a subgraph under the parent's
checkpointer, in a namespace of its own, so:

- its steps are checkpointed where they happen: after a crash, ``invoke(None)`` on the parent
  re-runs only the units that had not finished, each from its last checkpoint;
- an approval inside a unit is an interrupt of the parent run; several units may stop at once;
- its ledger lines carry the run's mode and the unit's actor (``task:<id>``);
- a unit that fails returns a failure result: it never cancels its siblings.
"""

from __future__ import annotations

from typing import Any, Callable

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph

from graphs.loop import add_agent_loop
from nodes.load_context import make_load_context
from nodes.support.state import Deps, RunContext
from nodes.unit import UnitInput, UnitOutput, UnitState, unit_finish, unit_start


def build_unit(deps: Deps) -> StateGraph:
    builder = StateGraph(UnitState, input_schema=UnitInput, output_schema=UnitOutput, context_schema=RunContext)
    builder.add_node("unit_start", unit_start)
    builder.add_node("load_context", make_load_context(deps))
    builder.add_node("unit_finish", unit_finish)
    builder.add_edge(START, "unit_start")
    builder.add_edge("unit_start", "load_context")
    add_agent_loop(builder, deps, after="load_context", exit_to="unit_finish")
    builder.add_edge("unit_finish", END)
    return builder


def unit_config(config: RunnableConfig, mode: str, actor: str) -> RunnableConfig:
    """The ledger labels a unit's lines with these (``JsonlLedgerSaver`` reads config metadata)."""
    return merge_configs(config, {"metadata": {"mode": mode, "actor": actor}})


def make_unit_node(deps: Deps, *, mode: str, actor: Callable[[str], str] = lambda uid: f"task:{uid}"):
    """The parent's node for ``Send(<node>, UnitInput)``; returns ``{"results": {unit_id: result}}``
    where a result is ``{"ok", "text", "approved_all", "external_sources"}``."""
    unit = build_unit(deps).compile(name="unit")

    async def run_unit(payload: UnitInput, config: RunnableConfig) -> dict[str, Any]:
        unit_id = payload["unit_id"]
        try:
            out = await unit.ainvoke(payload, unit_config(config, mode, actor(unit_id)))
        except GraphBubbleUp:  # an interrupt (an approval) stops the parent run: let it through
            raise
        except Exception as exc:  # a failing unit fails alone (house style: concurrency)
            out = {"result": {"ok": False, "text": f"{type(exc).__name__}: {exc}"}}
        result = {**(out.get("result") or {"ok": False, "text": "任务没有结果"}),
                  "approved_all": list(out.get("approved_all") or payload.get("approved_all") or []),
                  "external_sources": list(out.get("external_sources") or [])}
        return {"results": {unit_id: result}}

    return run_unit
