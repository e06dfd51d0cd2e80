"""snapshot: the project's working tree before a run (reference s.1 item 6, "Side-Git").

One node at the start of each graph (after ``prepare_turn``, ``plan_start``, ``team_start``),
so a ReAct turn, a Plan run and a Team run each take one snapshot, in the CLI and in Studio
alike; a Plan's tasks and a Team's steps share it. Resuming a run after an approval does not
take another. A snapshot that fails says so in one line and the run goes on: the user loses
the undo of that run, not the run.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from paicli.nodes.core.policy import submitted_text
from paicli.nodes.core.state import Deps, RunContext, run_context
from paicli.tools.snapshots.store import Label, SnapshotError

NODE = "snapshot"


def make_snapshot(deps: Deps, mode: str):
    async def snapshot(state: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
        if deps.snapshots is None:
            return {}
        ctx, notify = run_context(runtime), get_stream_writer()
        label = Label.of(mode, submitted_text(list(state.get("messages") or [])), ctx.session_id)
        try:  # git runs in a worker thread: the event loop (and `langgraph dev`) must not block
            taken = await asyncio.to_thread(deps.snapshots.take, ctx.project_root, label)
        except SnapshotError as exc:
            notify({"notice": f"⚠️ 本次运行前的快照没有保存：{exc}（这次的改动不能用 /restore 撤销）"})
            return {}
        for line in taken.notices:
            notify({"notice": line})
        return {}

    return snapshot
