"""The agent loop every execution unit runs (ARCHITECTURE.md "One execution unit"):

    call_model ──► (tool calls?) ──► [gate_tools] ──► execute_tools ──► call_model …
                        └─ no ──► done

``gate_tools`` is entered only when some call needs the user's approval, so the common path
costs two steps per model call, like a minimal tool loop.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memory.pairing import call_ids
from nodes.call_model import make_call_model
from nodes.execute_tools import make_execute_tools
from nodes.gate_tools import gate_tools, last_ai, needs_gate
from nodes.state import AgentState, Deps, RunContext, run_context


def route_after_model(state: AgentState, runtime: Runtime[RunContext]) -> str:
    ai = last_ai(state)
    if state.get("error") or ai is None or not call_ids(ai):
        return END
    return "gate_tools" if needs_gate(state, run_context(runtime)) else "execute_tools"


def build_agent_loop(deps: Deps) -> StateGraph:
    builder = StateGraph(AgentState, context_schema=RunContext)
    builder.add_node("call_model", make_call_model(deps))
    builder.add_node("gate_tools", gate_tools)
    builder.add_node("execute_tools", make_execute_tools(deps))
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", route_after_model, ["gate_tools", "execute_tools", END])
    builder.add_edge("gate_tools", "execute_tools")
    builder.add_edge("execute_tools", "call_model")
    return builder
