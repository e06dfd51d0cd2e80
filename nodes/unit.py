"""unit_start / unit_finish: the two ends of one execution unit with a message list of its own
(a Plan task; a Team step), around the shared agent loop (``graphs/unit.py``).

The unit's messages start with the user's own request, then the unit's brief as an internal
user message: everything that decides authority (the turn policy, which tools are exposed, the
memory query) reads the user's text (reference s.1 item 2), never the brief, which carries
other units' model-written results.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from typing_extensions import TypedDict

from paicli.memory.context.rounds import internal
from paicli.memory.tokens import text_of
from paicli.nodes.core.policy import discovered_urls
from paicli.nodes.core.state import AgentState

UNIT_INPUT = "unit_input"  # the internal kind of a unit's brief


def merge_results(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of a parent's ``results`` channel: units add theirs by id; ``None`` clears it
    for the next wave."""
    if right is None:
        return {}
    return {**(left or {}), **right}


class UnitInput(TypedDict, total=False):
    unit_id: str
    unit_request: str  # the user's submitted text (authority); "" when there is none
    unit_input: str  # the unit's brief
    approved_all: list[str]
    external_sources: list[str]
    trusted_urls: list[str]  # URLs the units this one depends on grounded with web_search (o.6)


class UnitOutput(TypedDict, total=False):
    result: dict[str, Any]  # {"ok": bool, "text": str}
    approved_all: list[str]
    external_sources: list[str]


class UnitState(AgentState, total=False):
    unit_id: str
    unit_request: str
    unit_input: str
    result: dict[str, Any]


async def unit_start(state: UnitState) -> dict[str, Any]:
    if state.get("messages"):  # resumed: the unit already started
        return {}
    request = state.get("unit_request") or ""
    first = [HumanMessage(request)] if request.strip() else []
    brief = internal(state.get("unit_input") or "", UNIT_INPUT) if first else HumanMessage(state.get("unit_input") or "")
    return {"messages": [*first, brief]}


async def unit_finish(state: UnitState) -> dict[str, Any]:
    """reference (s.4 per-task 5): the final content; when blank, the turn's tool results. The
    URLs its web_search grounded go with it, for the units that depend on it."""
    if state.get("error"):
        return {"result": {"ok": False, "text": state["error"]}}
    messages = list(state.get("messages") or [])
    trusted = sorted(set(state.get("trusted_urls") or ()) | discovered_urls(messages))
    last = messages[-1] if messages else None
    text = text_of(last).strip() if isinstance(last, AIMessage) else ""
    if not text:
        start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        text = "\n".join(text_of(m) for m in messages[start + 1:] if isinstance(m, ToolMessage)).strip()
    return {"result": {"ok": True, "text": text, "trusted_urls": trusted}}
