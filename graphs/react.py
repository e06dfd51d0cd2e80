"""The ReAct graph: prepare the turn, load its project context (PAI.md and relevant long-term
memory), then the agent loop on the conversation (wired flat), then post-task fact extraction.

``build_graph`` is what the CLI compiles with its checkpointer; ``langgraph.json`` gets a
graph compiled without one (the server injects its own), built in ``paicli.studio.graphs`` because
the chat model comes from the user's settings.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from paicli.graphs.builder import GraphBuilder
from paicli.graphs.loop import add_agent_loop
from paicli.graphs.start import link_start
from paicli.nodes.compact import Compaction
from paicli.nodes.core.run_errors import report_failure, route_end
from paicli.nodes.core.state import AgentState, Deps, MessagesInput, RunContext
from paicli.nodes.extract_facts import make_extract_facts
from paicli.nodes.load_context import make_load_context
from paicli.nodes.prepare_turn import prepare_turn


def build_react(deps: Deps, *, context_schema: type[RunContext] = RunContext,
                raise_on_error: bool = False) -> tuple[StateGraph, Compaction]:
    """The builder, and its ``Compaction`` for the CLI's /compact and /context.

    ``context_schema``: a ``RunContext`` subclass with other defaults (the server's project
    root). ``raise_on_error``: a provider failure fails the run (``report_failure``), for
    callers that only see a run's status; the CLI reads ``state["error"]`` instead.
    """
    # The input is the user's message only: Studio builds its input form from this schema.
    builder = GraphBuilder(AgentState, input_schema=MessagesInput, context_schema=context_schema)
    builder.add_node("prepare_turn", prepare_turn)
    builder.add_node("load_context", make_load_context(deps))
    builder.add_edge(START, "prepare_turn")
    link_start(builder, deps, "react", "prepare_turn", "load_context")
    builder.add_node("extract_facts", make_extract_facts(deps))
    compaction = add_agent_loop(builder, deps, after="load_context", exit_to="extract_facts")
    if raise_on_error:
        builder.add_node("report_failure", report_failure)
        builder.add_conditional_edges("extract_facts", route_end, ["report_failure", END])
    else:
        builder.add_edge("extract_facts", END)
    return builder, compaction


def build_react_graph(deps: Deps, *, context_schema: type[RunContext] = RunContext,
                      raise_on_error: bool = False) -> StateGraph:
    """The builder alone: the ``react`` row of ``paicli.modes``."""
    return build_react(deps, context_schema=context_schema, raise_on_error=raise_on_error)[0]


def build_graph(deps: Deps, checkpointer: BaseCheckpointSaver | None = None, store: BaseStore | None = None):
    return build_react(deps)[0].compile(checkpointer=checkpointer, store=store, name="react")
