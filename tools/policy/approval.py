"""Which tool calls need the user's approval (reference v.1, v.3).

``decide`` is pure: the gate node turns ``Ask`` into ``interrupt()`` and the answer into an
``Allow`` or a denial text. Approval levels:

- ``auto`` (startup default, reference v.1 ``/hitl default``): file writes and edits run;
  ``execute_command`` goes to the auto reviewer first (``Ask(review=True)``, answered by
  ``nodes.gate_tools`` with ``tools.policy.auto_review``); the person is asked only when the
  reviewer escalates, or when there is no reviewer (Studio without one, tests).
- ``ask`` (``/hitl on``): every dangerous tool asks.
- Every ``mcp__*`` tool asks at both levels: what it does is the external server's business.
  PaiCLI's auto mode hands MCP calls back to the model unrun (v.1); paicli asks the person
  instead, and never sends them to the reviewer: what they do is the server's, not their arguments'. "Approve all" of one MCP tool
  approves its whole server for the session (v.1 keys MCP approvals by server).
- ``yes`` (``--yes``): everything runs; guards still apply, since policy denials are not
  approvals to grant.

Writes to protected paths (``tools.policy.protected_paths``) ask at every level but ``yes``, and an
earlier "approve all" of the tool does not cover them, as the reference's sensitive-page
writes are exempt from approve-all (v.1). The question carries a ``notice`` naming the path and
why it is protected; a rejection repeats it, so a ``-p`` run without a terminal tells the model
why nothing was written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tools.policy.decision import Allow, Ask, Decision, Deny

from tools.mcp.names import is_mcp, server_of

__all__ = ["Allow", "Ask", "Decision", "Deny", "Unclear", "approval_request", "approved_before", "covered",
           "decide", "read_answer"]

DANGEROUS_TOOLS = frozenset({"write_file", "edit_file", "execute_command", "save_skill_reference"})  # reference v.1, t
AUTO_ASK_TOOLS = frozenset({"execute_command"})
AUTO_REVIEW_TOOLS = frozenset({"execute_command"})  # of AUTO_ASK_TOOLS, those the auto reviewer may allow (v.1)

# reference v.3: danger labels and risk descriptions shown in the approval dialog.
DANGER = {"execute_command": "🔴 高危", "write_file": "🟡 中危", "edit_file": "🟡 中危",
          "save_skill_reference": "🔴 高危"}
PROTECTED_DANGER = "🔴 高危"  # so the dialog wants an explicit y, as for a command
RISK = {
    "execute_command": "将在系统上执行 Shell 命令，可能修改文件、安装软件或影响系统状态",
    "write_file": "将写入或覆盖文件内容，原有内容将丢失",
    "edit_file": "将替换文件中唯一匹配的原文片段",
    "save_skill_reference": "将写入用户 Skill 的参考文件，以后加载该 Skill 的会话会读到这些内容",
}
MCP_DANGER = "🟡 MCP"  # reference v.3
MCP_RISK = "将调用外部 MCP server 提供的工具，可能访问网络、文件或第三方服务"


def decide(tool: str, args: dict[str, Any], level: str, approved_all: frozenset[str] | set[str] = frozenset(),
           protected: str | None = None) -> Decision:
    """``protected`` is the notice of a write to a protected path (``tools.policy.protected_paths``)."""
    if level == "yes":
        return Allow(args)
    if protected:  # a hook, .env or PAI.md runs or instructs later: as risky as a command
        return Ask(tool, args, PROTECTED_DANGER, RISK.get(tool, ""), protected)
    if approved_before(tool, approved_all):  # audited as the level's allow
        return Allow(args)
    if is_mcp(tool):
        return Ask(tool, args, MCP_DANGER, MCP_RISK)
    risky = DANGEROUS_TOOLS if level == "ask" else AUTO_ASK_TOOLS
    if tool in risky:
        return Ask(tool, args, DANGER.get(tool, "🟢 安全"), RISK.get(tool, ""),
                   review=level == "auto" and tool in AUTO_REVIEW_TOOLS)
    return Allow(args)


def approved_before(tool: str, approved_all: frozenset[str] | set[str]) -> bool:
    """The user chose "approve all" for this tool, or for a tool of the same MCP server (v.1)."""
    if tool in approved_all:
        return True
    server = server_of(tool)
    return server is not None and any(server_of(name) == server for name in approved_all)


def covered(ask: Ask, approved_all: frozenset[str] | set[str]) -> bool:
    """An "approve all" given earlier in the same step answers this question, unless the call
    writes a protected path: those are asked every time (v.1)."""
    return not ask.notice and approved_before(ask.tool, approved_all)


@dataclass(frozen=True)
class Unclear:
    """A resume value that is none of the accepted shapes: the question is asked again."""

    problem: str  # English and Chinese, shown with the repeated question


RESUME_HELP = (
    "Resume with one of the values under 'resume' (Command(resume=...)): approve, approve_all, "
    "reject (with an optional reason), skip, or edit (the same call with new 'args'). The bare strings "
    "\"y\", \"a\", \"n\", \"s\" also work; an edit needs the dict. Any other value asks again. / "
    "用 'resume' 中的一个值恢复运行：批准、全部放行、拒绝（可附原因）、跳过、修改参数（在 args 中给出新参数）。"
    "也可直接用字符串 \"y\"、\"a\"、\"n\"、\"s\"；修改参数必须用字典。其他值会重新询问。"
)


def approval_request(ask: Ask, call_id: str) -> dict[str, Any]:
    """The JSON payload of the ``interrupt``: what the CLI and Studio show the user, including
    the exact resume values ``read_answer`` accepts."""
    return {
        "kind": "tool_approval",
        "tool": ask.tool,
        "args": ask.args,
        "call_id": call_id,
        "danger": ask.danger,
        "risk": ask.risk,
        "notice": ask.notice,
        "choices": {"y": "批准", "a": "全部放行", "n": "拒绝", "s": "跳过", "m": "修改参数"},
        "resume": {
            "approve": {"decision": "approve"},
            "approve_all": {"decision": "approve_all"},
            "reject": {"decision": "reject", "reason": "why / 拒绝原因 (optional)"},
            "skip": {"decision": "skip"},
            "edit": {"decision": "edit", "args": ask.args},
        },
        "help": RESUME_HELP,
    }


# The words a resume value's decision may be; the letters are the CLI menu's (reference v.3).
# An empty value is not "Enter": it asks again, so nothing approves a 🔴 call by default.
_DECISIONS = {"y": "approve", "yes": "approve", "approve": "approve",
              "a": "approve_all", "approve_all": "approve_all", "n": "reject", "no": "reject",
              "reject": "reject", "s": "skip", "skip": "skip", "m": "edit", "edit": "edit"}
_EDIT_NEEDS_ARGS = ("an edit needs the new arguments: resume with {\"decision\": \"edit\", \"args\": {...}} / "
                    "修改参数需要给出新参数：{\"decision\": \"edit\", \"args\": {...}}")


def read_answer(answer: Any, ask: Ask) -> tuple[Decision | Unclear, bool]:
    """Turn a resume value into the user's decision (``approver="hitl"``); the flag says
    "approve all of this tool".

    Accepts the CLI's dict ``{"decision": ..., "reason"?, "args"?}`` or a bare string
    (``"y"``, ``"approve"``, ...) as a person would type in Studio. Anything else is ``Unclear``:
    the gate asks again rather than guessing (a typo must not reject, nor approve).
    """
    if isinstance(answer, str):
        answer = {"decision": answer}
    raw = answer.get("decision") if isinstance(answer, dict) else None
    verdict = _DECISIONS.get(raw.strip().lower()) if isinstance(raw, str) else None
    if verdict is None:
        shown = json.dumps(answer, ensure_ascii=False, default=str)[:200]
        return Unclear(f"resume value not understood / 无法识别的审批结果: {shown}. {RESUME_HELP}"), False
    if verdict in ("approve", "approve_all"):
        return Allow(ask.args, "hitl"), verdict == "approve_all"
    if verdict == "edit":
        args = answer.get("args")
        return (Allow(args, "hitl"), False) if isinstance(args, dict) else (Unclear(_EDIT_NEEDS_ARGS), False)
    if verdict == "skip":
        return Deny("[HITL] 操作已被跳过", "hitl"), False
    reason = str(answer.get("reason") or "").strip() or "用户拒绝了此操作"
    return Deny(f"[HITL] 操作已被拒绝：{reason}" + (f"。{ask.notice}" if ask.notice else ""), "hitl"), False
