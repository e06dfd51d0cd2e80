"""Which tool calls need the user's approval (reference v.1, v.3).

``decide`` is pure: the gate node turns ``Ask`` into ``interrupt()`` and the answer into an
``Allow`` or a denial text. Approval levels:

- ``auto`` (startup default, reference v.1 ``/hitl default``): file writes and edits run;
  ``execute_command`` goes to the auto reviewer first (``Ask(review=True)``, answered by
  ``paicli.nodes.gate_tools`` with ``paicli.tools.policy.auto_review``); the person is asked only when the
  reviewer escalates, or when there is no reviewer (Studio without one, tests). A command asking
  for the network or to leave the sandbox, ``revert_turn``, MCP tools and protected writes are
  never left to the reviewer: they ask the person.
- ``ask`` (``/hitl on``): every dangerous tool asks.
- Every ``mcp__*`` tool asks at both levels: what it does is the external server's business.
  PaiCLI's auto mode hands MCP calls back to the model unrun (v.1); paicli asks the person
  instead, and never sends them to the reviewer: what they do is the server's, not their arguments'. "Approve all" of one MCP tool
  approves its whole server for the session (v.1 keys MCP approvals by server).
- ``yes`` (``--yes``): everything runs; guards still apply, since policy denials are not
  approvals to grant.
- ``revert_turn`` asks at every level, ``yes`` included, and "approve all" never covers it:
  without a terminal it is refused unless ``PAICLI_ALLOW_REVERT=yes`` (issue 29).

Writes to protected paths (``paicli.tools.policy.protected_paths``) ask at every level but ``yes``, and an
earlier "approve all" of the tool does not cover them, as the reference's sensitive-page
writes are exempt from approve-all (v.1). The question carries a ``notice`` naming the path and
why it is protected; a rejection repeats it, so a ``-p`` run without a terminal tells the model
why nothing was written.

Once the session has read external content (web, MCP: ``external``), a protected write needs a
person even under ``yes`` (paicli issue 23, item 5): ``--yes`` is a script's blanket answer, and
the text that asked for the write may be the web page's. Under ``yes`` it is refused with one
line saying why; at the other levels the question says that the session read external content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from paicli.tools.policy.decision import Allow, Ask, Decision, Deny

from paicli.tools.mcp.names import server_of
from paicli.tools.sandbox.flags import command_flags
from paicli.tools.facts import DEFAULT, ToolFacts, plain_mcp

if TYPE_CHECKING:
    from paicli.tools.base import ToolSpec

__all__ = ["Allow", "Ask", "Decision", "Deny", "Unclear", "approval_key", "approval_request", "approved_before", "asking_tools", "covered",
           "decide", "read_answer"]

# Which tools ask, and their danger and risk texts (reference v.1, v.3), are facts on each
# tool's spec (paicli.tools.specs), carried by each call (paicli.tools.call.Call); MCP tools' come
# from their adapter (paicli.tools.facts.mcp_default).
PROTECTED_DANGER = "🔴 高危"  # so the dialog wants an explicit y, as for a command
# Beyond the reference (paicli issue 23, item 5): protected writes after external content.
PROTECTED_EXTERNAL_CONTEXT = "PROTECTED_EXTERNAL_CONTEXT"  # the audit's reason code, as the turn policy's
AFTER_EXTERNAL = "本会话已读取网页或 MCP 等外部内容，这次写入必须由用户在终端输入 y 确认"
# issue 24: a command tool's (execute_command's) `network: true` and `sandbox: false`. "Approve
# all" of a network call is kept under its own key and covers later network calls (and plain
# ones); leaving the sandbox is asked every time (a notice), wants a typed y, and --yes never
# answers it.
NETWORK_SUFFIX = ":network"
NETWORK_KEY = "execute_command" + NETWORK_SUFFIX
NETWORK_DANGER = "🟡 联网"
NETWORK_RISK = "命令将在沙箱内联网运行，输出视为外部内容：{reason}"
OUTSIDE_NOTICE = "命令请求在沙箱外运行（可写项目外的文件、可联网）：{reason}"
OUTSIDE_UNDER_YES = ("🛡️ sandbox: false 需要用户在终端亲自输入 y 确认，--yes 不能代替；"
                     "请在沙箱内完成，或请用户以交互方式运行 paicli")
NO_REASON = "（未说明原因）"
# issue 34 item 8: without slirp4netns a network command shares the host's network: a person decides.
HOST_NETWORK_NOTICE = ("本机没有 slirp4netns，这条命令将直接使用本机网络（可以访问本机 127.0.0.1 上的服务，"
                       "例如数据库或 paicli studio）：{reason}")
HOST_NETWORK_UNDER_YES = ("🛡️ 本机没有 slirp4netns：network: true 只能使用本机网络，需要用户在终端亲自输入 y 确认，"
                          "--yes 不能代替；请安装 slirp4netns，或请用户以交互方式运行 paicli")
APPROVED_ALL = "approve_all"  # the approver of a call an earlier "approve all" answered (audit, v.7)


def decide(tool: str, args: dict[str, Any], level: str, approved_all: frozenset[str] | set[str] = frozenset(),
           protected: str | None = None, external: bool = False, allow_revert: bool = False,
           network_granted: bool = False, host_network: bool = False, *, facts: ToolFacts) -> Decision:
    """``protected`` is the notice of a write to a protected path (``paicli.tools.policy.protected_paths``);
    ``external``: the session has read web or MCP content (``paicli.tools.policy.external_context``);
    ``allow_revert``: PAICLI_ALLOW_REVERT=yes; ``network_granted``: PAICLI_SANDBOX_NETWORK=on
    already gives every command network, so ``network: true`` asks for nothing more;
    ``host_network``: a network command would use the host's network (no slirp4netns), which only
    a person's typed y allows (issue 34). ``facts``: the call's (``paicli.tools.call.Call``)."""
    if facts.approval == "always":  # the notice makes it uncovered by "approve all" (``covered``)
        if level == "yes" and allow_revert:
            return Allow(args)
        return Ask(tool, args, facts.danger, facts.risk, facts.notice)
    flags = command_flags(args) if facts.guard == "command" else None
    if flags and flags.outside:
        if level == "yes":
            return Deny(OUTSIDE_UNDER_YES, reason="sandbox_outside")
        return Ask(tool, args, PROTECTED_DANGER, facts.risk, OUTSIDE_NOTICE.format(reason=flags.reason or NO_REASON))
    if flags and flags.network and host_network and not network_granted:
        if level == "yes":
            return Deny(HOST_NETWORK_UNDER_YES, reason="host_network")
        return Ask(tool, args, PROTECTED_DANGER, facts.risk, HOST_NETWORK_NOTICE.format(reason=flags.reason or NO_REASON))
    if protected and external:  # a person, every time: neither --yes nor "approve all" answers it
        if level == "yes":
            return Deny(unattended_refusal(protected), "policy", PROTECTED_EXTERNAL_CONTEXT)
        return Ask(tool, args, PROTECTED_DANGER, facts.risk, f"{protected}；{AFTER_EXTERNAL}")
    if level == "yes":
        return Allow(args)
    if protected:  # a hook, .env or PAI.md runs or instructs later: as risky as a command
        return Ask(tool, args, PROTECTED_DANGER, facts.risk, protected)
    key = approval_key(tool, args, network_granted, facts=facts)
    if approved_before(key, approved_all, _facts_of_key(key, tool, facts)):
        return Allow(args, APPROVED_ALL)  # issue 41: the audit names it, not the level
    if flags and flags.network and not network_granted:
        risk = NETWORK_RISK.format(reason=flags.reason or NO_REASON)
        plain_asks = not approved_before(tool, approved_all, facts)  # then one 🔴 question covers both
        return Ask(tool, args, facts.danger if plain_asks else NETWORK_DANGER, risk)
    if facts.approval == "auto" or (level == "ask" and facts.approval == "ask"):
        return Ask(tool, args, facts.danger, facts.risk, review=level == "auto" and facts.auto_review)
    return Allow(args)


def person_decides(tool: str, args: dict[str, Any], level: str, notice: str, code: str,
                   facts: ToolFacts) -> Decision:
    """A call only the person may allow, with a typed y every time (issue 34: memory the user did
    not ask for, global memory): refused under ``--yes``, never covered by "approve all"."""
    if level == "yes":
        return Deny(f"🛡️ 工具调用已拒绝 [{code}]: {notice}；--yes 不能代替用户确认（请在交互终端中运行并输入 y）",
                    "policy", code)
    return Ask(tool, args, PROTECTED_DANGER, facts.risk or notice, notice)


def asking_tools(tools: Mapping[str, ToolSpec]) -> list[str]:
    """The tools of the table ``tools`` that ask under /hitl on, by name (``/policy``); MCP tools
    ask too, and are named as a group."""
    return sorted(name for name, spec in tools.items()
                  if spec.facts.approval != "never" and not plain_mcp(spec.facts))


def unattended_refusal(protected: str) -> str:
    """The one line a ``--yes`` run gets (and the model reads) instead of the write."""
    # Why first: the CLI shows the first 160 characters of a failed result.
    return (f"🛡️ 工具调用已拒绝 [{PROTECTED_EXTERNAL_CONTEXT}]: 本会话已读取网页或 MCP 等外部内容，"
            f"--yes 不能代替用户确认（请在交互终端中运行并输入 y）：{protected}")


def approved_before(tool: str, approved_all: frozenset[str] | set[str], facts: ToolFacts) -> bool:
    """The user chose "approve all" for this tool (or approval key), or for a tool of the same
    MCP server (v.1). Approving network commands approves plain ones too."""
    if tool in approved_all or (is_command(facts) and tool + NETWORK_SUFFIX in approved_all):
        return True
    server = server_of(tool)
    return server is not None and any(server_of(name) == server for name in approved_all)


def covered(ask: Ask, approved_all: frozenset[str] | set[str], network_granted: bool = False, *,
            facts: ToolFacts) -> bool:
    """An "approve all" given earlier in the same step answers this question, unless the call
    writes a protected path: those are asked every time (v.1). ``facts``: the call's."""
    key = approval_key(ask.tool, ask.args, network_granted, facts=facts)
    return not ask.notice and approved_before(key, approved_all, _facts_of_key(key, ask.tool, facts))


def _facts_of_key(key: str, tool: str, facts: ToolFacts) -> ToolFacts:
    """An approval key's facts: the tool's when the key is the tool, a plain read's for
    ``tool:network``, which names no tool."""
    return facts if key == tool else DEFAULT


def approval_key(tool: str, args: Any, network_granted: bool = False, *, facts: ToolFacts) -> str:
    """What "approve all" of this call approves: the tool, or network commands (issue 24).
    When every command already has network (``network_granted``), a network call is a plain one."""
    network = is_command(facts) and command_flags(args).network and not network_granted
    return tool + NETWORK_SUFFIX if network else tool


def is_command(facts: ToolFacts) -> bool:
    """Its ``command`` argument runs in the shell, under the sandbox flags (issue 24)."""
    return facts.guard == "command"


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


EDIT_WIDENS = ("edited arguments may not add sandbox: false or network: true / 编辑后的参数不能新增 "
               "sandbox: false 或 network: true：这类调用需要单独提问")


def _widens(before: Any, after: Any) -> bool:
    old, new = command_flags(before), command_flags(after)
    return (new.outside and not old.outside) or (new.network and not old.network)


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
        if isinstance(args, dict) and _widens(ask.args, args):  # issue 34: never a way around the typed y
            return Unclear(EDIT_WIDENS), False
        return (Allow(args, "hitl"), False) if isinstance(args, dict) else (Unclear(_EDIT_NEEDS_ARGS), False)
    if verdict == "skip":
        return Deny("[HITL] 操作已被跳过", "hitl"), False
    reason = str(answer.get("reason") or "").strip() or "用户拒绝了此操作"
    return Deny(f"[HITL] 操作已被拒绝：{reason}" + (f"。{ask.notice}" if ask.notice else ""), "hitl"), False
