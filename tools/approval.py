"""Which tool calls need the user's approval (reference v.1, v.3).

``decide`` is pure: the gate node turns ``Ask`` into ``interrupt()`` and the answer into an
``Allow`` or a denial text. Approval levels:

- ``auto`` (startup default, reference v.1 ``/hitl default``): file writes and edits run;
  ``execute_command`` asks. PaiCLI first asks an LLM classifier; until we have one, auto mode
  fails closed to asking, as the reference's classifier does when no client is available.
- ``ask`` (``/hitl on``): every dangerous tool asks.
- ``yes`` (``--yes``): everything runs; guards still apply, since policy denials are not
  approvals to grant.

Writes to protected paths (``tools.protected_paths``) ask at every level but ``yes``, and an
earlier "approve all" of the tool does not cover them, as the reference's sensitive-page
writes are exempt from approve-all (v.1). The question carries a ``notice`` naming the path and
why it is protected; a rejection repeats it, so a ``-p`` run without a terminal tells the model
why nothing was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

DANGEROUS_TOOLS = frozenset({"write_file", "edit_file", "execute_command"})  # reference v.1
AUTO_ASK_TOOLS = frozenset({"execute_command"})

# reference v.3: danger labels and risk descriptions shown in the approval dialog.
DANGER = {"execute_command": "🔴 高危", "write_file": "🟡 中危", "edit_file": "🟡 中危"}
RISK = {
    "execute_command": "将在系统上执行 Shell 命令，可能修改文件、安装软件或影响系统状态",
    "write_file": "将写入或覆盖文件内容，原有内容将丢失",
    "edit_file": "将替换文件中唯一匹配的原文片段",
}


@dataclass(frozen=True)
class Allow:
    args: dict[str, Any]


@dataclass(frozen=True)
class Ask:
    tool: str
    args: dict[str, Any]
    danger: str
    risk: str
    notice: str = ""  # why this call needs a question even when the level would not ask


@dataclass(frozen=True)
class Deny:
    text: str  # the tool result the model reads


Decision = Union[Allow, Ask, Deny]


def decide(tool: str, args: dict[str, Any], level: str, approved_all: frozenset[str] | set[str] = frozenset(),
           protected: str | None = None) -> Decision:
    """``protected`` is the notice of a write to a protected path (``tools.protected_paths``)."""
    if level == "yes":
        return Allow(args)
    if protected:
        return Ask(tool, args, DANGER.get(tool, "🟢 安全"), RISK.get(tool, ""), protected)
    if tool in approved_all:
        return Allow(args)
    risky = DANGEROUS_TOOLS if level == "ask" else AUTO_ASK_TOOLS
    if tool in risky:
        return Ask(tool, args, DANGER.get(tool, "🟢 安全"), RISK.get(tool, ""))
    return Allow(args)


def approval_request(ask: Ask, call_id: str) -> dict[str, Any]:
    """The JSON payload of the ``interrupt``: what the CLI and Studio show the user."""
    return {
        "kind": "tool_approval",
        "tool": ask.tool,
        "args": ask.args,
        "call_id": call_id,
        "danger": ask.danger,
        "risk": ask.risk,
        "notice": ask.notice,
        "choices": {"y": "批准", "a": "全部放行", "n": "拒绝", "s": "跳过", "m": "修改参数"},
    }


_SHORT = {"y": "approve", "yes": "approve", "": "approve", "a": "approve_all", "n": "reject", "no": "reject", "s": "skip"}


def read_answer(answer: Any, ask: Ask) -> tuple[Decision, bool]:
    """Turn a resume value into a decision; the flag says "approve all of this tool".

    Accepts the CLI's dict ``{"decision": ..., "reason"?, "args"?}`` or a bare string
    (``"y"``, ``"approve"``, ...) as a person would type in Studio. Anything unreadable is a
    rejection: approval fails closed.
    """
    if isinstance(answer, str):
        answer = {"decision": _SHORT.get(answer.strip().lower(), answer.strip().lower())}
    if not isinstance(answer, dict):
        answer = {"decision": "reject", "reason": "无法识别的审批结果"}
    verdict = str(answer.get("decision", "")).lower()
    if verdict == "approve":
        return Allow(ask.args), False
    if verdict == "approve_all":
        return Allow(ask.args), True
    if verdict == "edit" and isinstance(answer.get("args"), dict):
        return Allow(answer["args"]), False
    if verdict == "skip":
        return Deny("[HITL] 操作已被跳过"), False
    reason = str(answer.get("reason") or "").strip() or "用户拒绝了此操作"
    return Deny(f"[HITL] 操作已被拒绝：{reason}" + (f"。{ask.notice}" if ask.notice else "")), False
