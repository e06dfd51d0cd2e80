"""Running a Plan or Team graph for a session from the CLI (shared glue; issue 15 built the
part Team needed, for issue 14 to extend: `/team`, `/plan`, the REPL, the handoff to the ReAct conversation and `--continue`).

The graph checkpoints into the session's own ledger under a namespace of its own
(``NamespacedSaver``), so the ReAct conversation at the root namespace is untouched; its lines
carry ``mode`` and the member's ``actor``. The session's turn lock is held for the whole run.
Notices go to the renderer (stderr in ``-p``); approvals are asked one at a time, and the
answers resume every stopped unit together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import Command

from memory.ledger.namespaced import NamespacedSaver
from nodes.support.state import RunContext


@dataclass
class ModeResult:
    outcome: str = ""
    status: str = ""  # completed | failed | partial | "" (did not finish)


def build_mode_graph(session: Any, mode: str):
    if mode == "team":
        from graphs.team import build_graph
    else:
        raise ValueError(f"mode {mode!r} has no graph here")
    saver = NamespacedSaver(session.checkpointer, mode)
    return build_graph(session.deps, checkpointer=saver, store=session.store)


def mode_config(session: Any, mode: str) -> dict[str, Any]:
    return {**session.config, "metadata": {"mode": mode, "actor": "orchestrator"}}


async def run_mode(session: Any, mode: str, text: str, ui: Any) -> ModeResult:
    graph, config = build_mode_graph(session, mode), mode_config(session, mode)
    context = RunContext(**{**session.context.__dict__, "mode": mode})
    pending: Any = {"messages": [HumanMessage(text)]}
    async with session.turn_lock(ui.notice):
        while pending is not None:
            interrupts = await _stream(graph, pending, config, context, ui)
            pending = Command(resume={i.id: await ui.approve(i.value) for i in interrupts}) if interrupts else None
    values = dict((await graph.aget_state(config)).values)
    return ModeResult(outcome=str(values.get("outcome") or ""), status=str(values.get("status") or ""))


async def _stream(graph: Any, graph_input: Any, config: dict, context: RunContext, ui: Any) -> list[Any]:
    interrupts: dict[str, Any] = {}
    async for _ns, mode, data in graph.astream(graph_input, config, context=context,
                                               stream_mode=["updates", "custom"], subgraphs=True, durability="sync"):
        if mode == "custom":
            if isinstance(data, dict) and data.get("notice"):
                ui.notice(data["notice"])
            continue
        for i in data.get("__interrupt__", ()) if isinstance(data, dict) else ():
            interrupts[i.id] = i
    return list(interrupts.values())
