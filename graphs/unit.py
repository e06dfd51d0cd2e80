"""One execution unit as a ``Send`` target: the agent loop on a message list of its own.

A Plan task (and a Team step) is the same loop as the ReAct conversation (``graphs/loop.py``:
compaction, the turn policy, approvals as interrupts, offload, budgets, the runaway guard), with
the same context assembly (the ``load_context`` node), wired flat inside a small graph of its
own: ``unit_start → load_context → (agent loop) → unit_finish``.

``make_unit_node`` wraps the compiled unit for the parent graph. The parent sends it one
payload per unit (``paicli.nodes.unit.UnitInput``); the unit runs as a subgraph under the parent's
checkpointer, in a namespace of its own, so:

- its steps are checkpointed where they happen: after a crash, ``invoke(None)`` on the parent
  re-runs only the units that had not finished, each from its last checkpoint;
- an approval inside a unit is an interrupt of the parent run; several units may stop at once;
- its ledger lines carry the run's mode and the unit's actor (``task:<id>``);
- a unit that fails returns a failure result: it never cancels its siblings.
"""

from __future__ import annotations

from typing import Any, Callable

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.types import Interrupt

# The run config keys a node's subgraph call is made with (langgraph._internal._constants):
# where the unit's checkpoints are, and whether the parent run resumes.
CHECKPOINTER_KEY, RESUMING_KEY = "__pregel_checkpointer", "__pregel_resuming"

from paicli.graphs.builder import GraphBuilder
from paicli.graphs.loop import add_agent_loop
from paicli.memory.context.pairing import repair_pairing
from paicli.nodes.core.state import Deps, RunContext
from paicli.nodes.load_context import make_load_context
from paicli.nodes.unit import UnitInput, UnitOutput, UnitState, unit_finish, unit_start


def add_unit(builder: StateGraph, deps: Deps, *, finish_to: str) -> None:
    """Wire one unit into ``builder``: ``START → unit_start → load_context → (agent loop) →
    unit_finish → finish_to``. A Team step adds its review after ``unit_finish``."""
    builder.add_node("unit_start", unit_start)
    builder.add_node("load_context", make_load_context(deps))
    builder.add_node("unit_finish", unit_finish)
    builder.add_edge(START, "unit_start")
    builder.add_edge("unit_start", "load_context")
    add_agent_loop(builder, deps, after="load_context", exit_to="unit_finish")
    builder.add_edge("unit_finish", finish_to)


def build_unit(deps: Deps) -> StateGraph:
    builder = GraphBuilder(UnitState, input_schema=UnitInput, output_schema=UnitOutput, context_schema=RunContext)
    add_unit(builder, deps, finish_to=END)
    return builder


def unit_config(config: RunnableConfig, mode: str, actor: str) -> RunnableConfig:
    """The ledger labels a unit's lines with these (``JsonlLedgerSaver`` reads config metadata)."""
    return merge_configs(config, {"metadata": {"mode": mode, "actor": actor}})


def named(interrupt: Interrupt, unit_id: str) -> Interrupt:
    """The same interrupt (same id: the resume finds it), its request saying which unit asks."""
    value = {**interrupt.value, "unit": unit_id} if isinstance(interrupt.value, dict) else interrupt.value
    return Interrupt(value, interrupt.id, response_schema=interrupt.response_schema)


# What a unit's run streams to the front end (and returns): its output, and its messages, so the
# CLI can show each unit's tool calls (issue 26). LangGraph streams only the keys asked for.
STREAMED = ["messages", "result", "approved_all", "external_sources"]


def announce(unit_id: str, config: RunnableConfig) -> None:
    """Tell the front end which unit streams under this node's namespace (issue 26: its tool
    calls are shown with its id)."""
    namespace = (config.get("configurable") or {}).get("checkpoint_ns")
    if namespace:
        get_stream_writer()({"unit": unit_id, "ns": namespace})


async def cancel_unanswered(unit: Any, config: RunnableConfig) -> None:
    """Q11: a unit resumed after a crash in the middle of ``execute_tools`` does not run those
    calls again (they may have had effects): each gets the "cancelled" result instead, as the
    next ReAct turn would give it (``paicli.memory.context.pairing``), and the model goes on from there."""
    configurable = config.get("configurable") or {}
    if not configurable.get(RESUMING_KEY) or CHECKPOINTER_KEY not in configurable:
        return
    own = {"configurable": {"thread_id": configurable.get("thread_id"), CHECKPOINTER_KEY: configurable[CHECKPOINTER_KEY],
                            "checkpoint_ns": configurable.get("checkpoint_ns", "")}}
    state = await unit.aget_state(own)
    if tuple(state.next) != ("execute_tools",):
        return
    messages = list(state.values.get("messages") or [])
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    cancelled = [m for m in repair_pairing(messages) or [] if isinstance(m, ToolMessage) and m.tool_call_id not in answered]
    if cancelled:
        at = {"configurable": {**state.config["configurable"], CHECKPOINTER_KEY: configurable[CHECKPOINTER_KEY]}}
        await unit.aupdate_state(at, {"messages": cancelled}, as_node="execute_tools")


async def run_in_scope(deps: Deps, unit_id: str, run: Any) -> Any:
    """Issue 40: the unit's turn with the browser (``paicli.tools.browser.lease``) ends with the unit,
    however it ends; without a browser the run is awaited as it is."""
    if deps.browser is None:
        return await run
    async with deps.browser.lease.scope(unit_id):
        return await run


def task_actor(payload: dict[str, Any]) -> str:
    return f"task:{payload['unit_id']}"


def make_unit_node(deps: Deps, *, mode: str, actor: Callable[[dict[str, Any]], str] = task_actor,
                   unit: StateGraph | None = None, name: str = "unit", no_result: str = "任务没有结果",
                   failed: Callable[[str, str], None] | None = None):
    """The parent's node for ``Send(<node>, UnitInput)``; returns ``{"results": {unit_id: result}}``
    where a result is ``{"ok", "text", "trusted_urls", "approved_all", "external_sources", ...}``.

    ``unit``: the unit's graph (default :func:`build_unit`; a Team step is one with its review
    around the loop), compiled as ``name``; ``actor(payload)`` labels its ledger lines;
    ``no_result`` is the failure text of a unit that returned none; ``failed(unit_id, text)`` is
    told of a unit that raised."""
    compiled = (unit if unit is not None else build_unit(deps)).compile(name=name)

    async def run_unit(payload: UnitInput, config: RunnableConfig) -> dict[str, Any]:
        unit_id = payload["unit_id"]
        announce(unit_id, config)
        try:
            await cancel_unanswered(compiled, config)  # resumed after a crash inside execute_tools (Q11)
            out = await run_in_scope(deps, unit_id, compiled.ainvoke(payload, unit_config(config, mode, actor(payload)),
                                                                     output_keys=STREAMED))
        except GraphInterrupt as stop:  # an approval stops the parent run; the question names the unit
            raise GraphInterrupt([named(i, unit_id) for i in stop.args[0]]) from None
        except GraphBubbleUp:
            raise
        except Exception as exc:  # a failing unit fails alone (house style: concurrency)
            text = f"{type(exc).__name__}: {exc}"
            if failed is not None:
                failed(unit_id, text)
            out = {"result": {"ok": False, "text": text}}
        result = {**(out.get("result") or {"ok": False, "text": no_result}),
                  "approved_all": list(out.get("approved_all") or payload.get("approved_all") or []),
                  "external_sources": list(out.get("external_sources") or [])}
        return {"results": {unit_id: result}}

    return run_unit
