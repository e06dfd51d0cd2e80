"""The agent loop every execution unit runs (docs/architecture.md, "One execution unit"):

    ─► [compact] ──► call_model ──► (tool calls?) ──► [gate_tools] ──► execute_tools ──┐
        ▲                               └─ no ──► exit                                   │
        └────────────────────────────────────────────────────────────────────────────────┘

The bracketed nodes run only when needed: ``compact`` when a compaction tier would fire (the
estimate is over its threshold and, for clearing, an old result is left to clear),
``gate_tools`` when a call needs the user's approval. With language servers (``Deps.lsp``), a
step that wrote a file one of them serves goes through ``diagnostics`` before the router in front
of the model (``nodes/diagnostics.py``).
The deciding checks are cheap (a cached estimate; the decisions call_model recorded for the
answer's calls), so the common path costs two graph steps per model call, like a minimal tool loop.

``add_agent_loop`` wires the loop into a parent graph *flat*, so every graph step is checkpointed in
the parent's own state: a turn cancelled or killed midway keeps the messages it completed (a
compiled subgraph node would hand its messages to the parent only when it finishes).
``build_agent_loop`` is the same loop as a standalone graph, for units with their own
message list (Plan tasks, Team steps).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import get_runtime

from paicli.graphs.builder import GraphBuilder
from paicli.memory.context.pairing import call_ids
from paicli.nodes.compact import Compaction, make_compact
from paicli.nodes.core.state import AgentState, Deps, RunContext, run_context
from paicli.nodes.diagnostics import make_diagnostics, wants_diagnostics
from paicli.nodes.execute_tools import make_execute_tools
from paicli.nodes.gate_tools import last_ai, make_gate_tools, needs_gate
from paicli.nodes.model.call_model import ModelCaller, make_call_model


def current_context() -> RunContext:
    """Routers read the context this way, not as a ``runtime`` argument: LangGraph requires
    that argument, and ``update_state`` (Studio's state editing) runs routers without one."""
    try:
        return run_context(get_runtime())
    except RuntimeError:
        return run_context(None)


def add_agent_loop(builder: StateGraph, deps: Deps, *, after: str, exit_to: str = END) -> Compaction:
    """Add the loop's nodes to ``builder``, entered from node ``after`` (or START); returns the
    graph's ``Compaction`` for the CLI's /compact and /context."""
    caller = ModelCaller(deps)
    compaction = Compaction(caller)

    # The routers are coroutines: LangGraph runs a plain function router in a worker thread, a
    # thread hop per model call for a check that reads only the state and cached estimates.
    async def into_model(state: AgentState) -> str:
        return "compact" if compaction.needed(state, current_context()) else "call_model"

    async def after_gate(state: AgentState) -> str:
        return "gate_tools" if needs_gate(state) else "execute_tools"

    async def after_model(state: AgentState) -> str:
        ai = last_ai(state)
        if state.get("error") or ai is None or not call_ids(ai):
            return exit_to
        return await after_gate(state)

    builder.add_node("compact", make_compact(compaction))
    builder.add_node("call_model", make_call_model(caller, compaction))
    builder.add_node("gate_tools", make_gate_tools(deps))
    builder.add_node("execute_tools", make_execute_tools(deps))
    builder.add_conditional_edges(after, into_model, ["compact", "call_model"])
    builder.add_edge("compact", "call_model")
    builder.add_conditional_edges("call_model", after_model, ["gate_tools", "execute_tools", exit_to])
    # The auto reviewer's pass (paicli.nodes.gate_tools) may leave a question for the person: back to the gate.
    builder.add_conditional_edges("gate_tools", after_gate, ["gate_tools", "execute_tools"])
    if deps.lsp is None:
        builder.add_conditional_edges("execute_tools", into_model, ["compact", "call_model"])
        return compaction
    # Language servers (issue 38): a step that wrote a file a server serves goes through the
    # diagnostics node first; any other step costs only the look-up.
    async def after_tools(state: AgentState) -> str:
        return "diagnostics" if wants_diagnostics(state, deps, current_context()) else await into_model(state)

    builder.add_node("diagnostics", make_diagnostics(deps))
    builder.add_conditional_edges("execute_tools", after_tools, ["diagnostics", "compact", "call_model"])
    builder.add_conditional_edges("diagnostics", into_model, ["compact", "call_model"])
    return compaction


def build_agent_loop(deps: Deps) -> StateGraph:
    builder = GraphBuilder(AgentState, context_schema=RunContext)
    add_agent_loop(builder, deps, after=START)
    return builder
