"""A wave: the ready units the scheduler picked (``paicli.nodes.dag``: at most its ``max_wave``), fanned out with ``Send``.

All units of one wave run in the same superstep, concurrently, each in its own namespace
(``graphs/unit.py``). Each reports into a ``results`` channel keyed by unit id (reducer
``paicli.nodes.unit.merge_results``), so the node after the wave applies them in the order it chooses
(Plan: task order), whatever order they finished in. A unit that completed keeps its result
even when a sibling stops for approval or the process dies: LangGraph saves it as a pending
write of the wave's checkpoint and does not run it again.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import Send

def fan_out(node: str, payloads: list[dict[str, Any]]) -> list[Send]:
    """One ``Send`` per unit, in order. The wave is already capped: the scheduler picked it."""
    return [Send(node, payload) for payload in payloads]
