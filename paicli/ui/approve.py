"""The terminal approval dialog (reference v.3), answering ``gate_tools`` interrupts.

``read_line`` is an async callable returning the typed line, or ``None`` when input is closed;
the REPL passes prompt_toolkit, ``-p`` passes stdin. Closed input rejects: approval fails closed.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

from paicli.tools.mcp.names import server_of

ReadLine = Callable[[str], Awaitable[str | None]]
MAX_INVALID_ROUNDS = 5  # reference v.3
MENU = "请选择操作：[y/Enter] 批准  [a] 全部放行  [n] 拒绝  [s] 跳过  [m] 修改参数"
# A 🔴 call is approved only by a typed y: an Enter pressed out of habit must not run it.
HIGH_RISK_MENU = "请选择操作：[y] 批准  [a] 全部放行  [n] 拒绝  [s] 跳过  [m] 修改参数"
ENTER_IS_NOT_YES = "  🔴 高危操作需要输入 y 批准，Enter 不会批准"


def high_risk(request: dict[str, Any]) -> bool:
    return str(request.get("danger") or "").startswith("🔴")


QUESTION_DIFF_LINES = 30  # the change a write would make, in its question (issue 41)
SHOWN_ARG_CHARS = 200  # a long argument, when the change below shows it anyway


def describe(request: dict[str, Any]) -> list[str]:
    change = request.get("change") if isinstance(request.get("change"), dict) else None
    args = json.dumps(_shortened(request.get("args")) if change else request.get("args"), ensure_ascii=False, indent=2)
    return [
        "",
        "────────── ⚠️  HITL 审批请求 ──────────",
        *([f"⚠️  {request['notice']}"] if request.get("notice") else []),  # reference v.3: the notice line
        f"工具: {request.get('tool')}   危险等级: {request.get('danger')}",
        f"风险: {request.get('risk')}",
        "参数:",
        *("  " + line for line in args.splitlines()),
        *(_change(change) if change else []),
        HIGH_RISK_MENU if high_risk(request) else MENU,
    ]


def _change(change: dict[str, Any]) -> list[str]:
    """What the write would change, against the file as it is now."""
    from paicli.ui.previews import change_lines

    head = "将新建文件:" if change.get("new_file") else "将改动（与现有文件比较）:"
    return [head, *change_lines(change, QUESTION_DIFF_LINES, indent="  ")]


def _shortened(args: Any) -> Any:
    if not isinstance(args, dict):
        return args
    return {k: v[:SHOWN_ARG_CHARS] + f"…（共 {len(v)} 字符，改动见下）" if isinstance(v, str) and len(v) > SHOWN_ARG_CHARS
            else v for k, v in args.items()}


def approved_all_line(request: dict[str, Any]) -> str:
    """What "approve all" will do. A question with a notice (a protected path, leaving the
    sandbox, revert_turn) is one "approve all" never covers: such calls still ask (issue 41)."""
    tool = str(request.get("tool") or "")
    server = server_of(tool)
    later = f"后续 MCP server {server} 的工具" if server else f"后续 {tool} 操作"
    if request.get("notice"):
        return f"  已批准本次；{later}中的普通调用将自动通过，像这次这样需要提示的操作仍会每次询问"
    return f"  已批准，{later}将自动通过"


async def ask_approval(request: dict[str, Any], read_line: ReadLine, say: Callable[[str], None]) -> dict[str, Any]:
    for line in describe(request):
        say(line)
    for _ in range(MAX_INVALID_ROUNDS):
        raw = await read_line("> ")
        if raw is None:
            return {"decision": "reject", "reason": "输入流已关闭"}
        choice = raw.strip().lower()
        if choice == "" and high_risk(request):
            say(ENTER_IS_NOT_YES)
            continue
        if choice in ("", "y", "yes"):
            say("  已批准")
            return {"decision": "approve"}
        if choice == "a":
            say(approved_all_line(request))
            return {"decision": "approve_all"}
        if choice == "n":
            reason = await read_line("  拒绝原因（可直接回车跳过）：")
            return {"decision": "reject", "reason": (reason or "").strip()}
        if choice == "s":
            say("  已跳过本次操作")
            return {"decision": "skip"}
        if choice == "m":
            edited = await _edit_args(request, read_line, say)
            if edited is not None:
                return edited
            continue
        enter = "" if high_risk(request) else "（Enter 等价于 y）"
        say(f"  ❓ 无法识别的选项：'{raw.strip()}'，请输入 y/a/n/s/m 之一{enter}")
    say("  [HITL] 连续多次无效输入，保守处理为拒绝")
    return {"decision": "reject", "reason": "连续多次无效输入"}


async def _edit_args(request: dict[str, Any], read_line: ReadLine, say: Callable[[str], None]) -> dict[str, Any] | None:
    say(f"  当前参数：{json.dumps(request.get('args'), ensure_ascii=False)}")
    raw = await read_line("  请输入修改后的参数（JSON 格式，空行则使用原始参数）：")
    if raw is None:  # approval fails closed
        return {"decision": "reject", "reason": "输入流已关闭"}
    if not raw.strip():
        if high_risk(request):
            say(ENTER_IS_NOT_YES)
            return None
        say("  输入为空，改为批准原始参数")
        return {"decision": "approve"}
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:  # its own words are English: say where
        say(f"  ❌ 修改后的参数不是合法 JSON：第 {exc.lineno} 行第 {exc.colno} 列有误")
        return None
    if not isinstance(args, dict):
        say("  ❌ 修改后的参数不是合法 JSON：需要一个 JSON 对象")
        return None
    say(f"  已修改参数，将执行：{json.dumps(args, ensure_ascii=False)}")
    return {"decision": "edit", "args": args}
