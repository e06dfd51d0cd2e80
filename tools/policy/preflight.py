"""The guards a call must pass before anyone is asked about it (paicli issue 23, item 6).

PaiCLI runs PathGuard and CommandGuard inside the tool, after the approval question (reference
v.4 step 3), so ``rm -rf ~`` first shows the 🔴 question and is refused only after a ``y``, and
the audit log then reads as an approved call that failed. paicli runs the same guards while it
decides the call (``paicli.nodes.core.policy.decide``): a call they refuse is a ``Deny`` with the
guard's own ``🛡️ 策略拒绝: <reason>`` text, approver ``policy``, and nobody is asked.

The tools still run their guards when they execute: the user may have edited the arguments at the
question, and an earlier call of the same step may have changed the file system since (a script
written, a link made). What the guards judge here is what the call says now.

Blocking: paths are resolved on the file system and CommandGuard reads the scripts a command
runs, so the caller runs this in a worker thread (``langgraph dev`` refuses blocking calls on its
event loop).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paicli.tools.base import PolicyError
from paicli.tools.common import str_arg
from paicli.tools.policy.guards import CommandGuard, PathGuard
from paicli.tools.facts import ToolFacts

REFUSED = "🛡️ 策略拒绝: {}"  # the text the tool itself gives for a PolicyError (paicli.tools.registry)


def guard_refusal(tool: str, args: Any, root: str | Path, facts: ToolFacts) -> str | None:
    """Why a guard refuses this call, or None: the reason a ``PolicyError`` of the tool would carry.
    The tool's ``guard`` fact says which guard, ``path_arg``/``path_default``/``writes`` on what
    (``facts``: the call's)."""
    if not isinstance(args, dict):
        return None
    try:
        if facts.guard == "path" and facts.path_arg and facts.writes == "project":
            PathGuard(root).resolve_write(str_arg(args, facts.path_arg))
        elif facts.guard == "path" and facts.path_arg:
            PathGuard(root).resolve(str_arg(args, facts.path_arg, facts.path_default))
        elif facts.guard == "command":
            command = str_arg(args, "command") or ""
            if command.strip():  # an empty command is the tool's own failure, not a refusal
                CommandGuard.check(command, root)
    except PolicyError as exc:
        return exc.reason
    return None
