"""Where a run's snapshot goes in a graph (``paicli.nodes.snapshot``)."""

from __future__ import annotations

from langgraph.graph import StateGraph

from paicli.nodes.core.state import Deps
from paicli.nodes.snapshot import NODE, make_snapshot


def link_start(builder: StateGraph, deps: Deps, mode: str, first: str, then: str) -> None:
    """``first`` → ``then``, with the turn snapshot between them when ``deps`` take snapshots."""
    if deps.snapshots is None:
        builder.add_edge(first, then)
        return
    builder.add_node(NODE, make_snapshot(deps, mode))
    builder.add_edge(first, NODE)
    builder.add_edge(NODE, then)
