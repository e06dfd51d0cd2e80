"""The ``revert_turn`` tool (reference t): the model's ``/restore``.

It restores the working tree to the snapshot taken before the N-th most recent run, after
recording the tree as it is, so the user can undo it with ``/restore 1``. Whether it may run is
the policy's (``paicli.tools.policy.approval``): asked every time, never covered by "approve all", and
refused under ``--yes`` without a terminal unless ``PAICLI_ALLOW_REVERT=yes``.
"""

from __future__ import annotations

from typing import Any

from paicli.tools.base import ToolContext, ToolSpec, failed
from paicli.tools.common import int_arg
from paicli.tools.specs import REVERT_TURN
from paicli.tools.snapshots.report import change_lines
from paicli.tools.snapshots.store import Label, SnapshotError, TurnSnapshots

TOOL = "revert_turn"
FAIL = "恢复快照失败: "  # reference t


def revert_turn_spec(snapshots: TurnSnapshots) -> ToolSpec:
    return REVERT_TURN.bound(lambda args, ctx: revert_turn(args, ctx, snapshots))


def revert_turn(args: dict[str, Any], ctx: ToolContext, snapshots: TurnSnapshots) -> str:
    try:
        offset = int_arg(args, "offset", 1)
    except ValueError as exc:
        return failed(FAIL + str(exc))
    if offset is None or offset < 1:
        return failed(FAIL + "offset 必须是不小于 1 的整数")
    try:
        plan = snapshots.project(ctx.root).restore(offset, Label(
            "restore", f"revert_turn(offset={offset})", ctx.session_id))
    except SnapshotError as exc:
        return failed(FAIL + str(exc))
    return "\n".join([*change_lines(plan, done=True), "恢复前的工作区已另存为快照 1，用户可用 /restore 1 撤销这次恢复。"])
