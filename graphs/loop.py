"""The agent loop every execution unit runs (ARCHITECTURE.md "One execution unit"):

    call_model ──► (tool calls?) ──► [gate_tools] ──► execute_tools ──► call_model …
                        └─ no ──► exit

``gate_tools`` is entered only when some call needs the user's approval, so the common path
costs two steps per model call, like a minimal tool loop.

``add_agent_loop`` wires the loop into a parent graph *flat*, so every step is checkpointed in
the parent's own state: a turn cancelled or killed midway keeps the messages it completed (a
compiled subgraph node would hand its messages to the parent only when it finishes).
``build_agent_loop`` is the same loop as a standalone graph, for units with their own
message list (Plan tasks, Team members).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memory.pairing import call_ids
from nodes.call_model import make_call_model
from nodes.execute_tools import make_execute_tools
from nodes.gate_tools import gate_tools, last_ai, needs_gate
from nodes.state import AgentState, Deps, RunContext, run_context

ENTRY = "call_model"


def add_agent_loop(builder: StateGraph, deps: Deps, exit_to: str = END) -> str:
    """Add the loop's nodes to ``builder``; returns the entry node name."""

    def route_after_model(state: AgentState, runtime: Runtime[RunContext]) -> str:
        ai = last_ai(state)
        if state.get("error") or ai is None or not call_ids(ai):
            return exit_to
        return "gate_tools" if needs_gate(state, run_context(runtime)) else "execute_tools"

    builder.add_node("call_model", make_call_model(deps))
    builder.add_node("gate_tools", gate_tools)
    builder.add_node("execute_tools", make_execute_tools(deps))
    builder.add_conditional_edges("call_model", route_after_model, ["gate_tools", "execute_tools", exit_to])
    builder.add_edge("gate_tools", "execute_tools")
    builder.add_edge("execute_tools", "call_model")
    return ENTRY


def build_agent_loop(deps: Deps) -> StateGraph:
    builder = StateGraph(AgentState, context_schema=RunContext)
    builder.add_edge(START, add_agent_loop(builder, deps))
    return builder
