"""execute_tools: run the allowed calls of the last assistant message, answer every call.

Every call id of the assistant message gets exactly one ``ToolMessage``, in call order:
the tool's result, a denial, or a parse error for arguments that were not valid JSON.
Each result is wrapped in the untrusted-data boundary (reference r) before the model sees it.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from memory.offload import ToolResultOffloader
from nodes.gate_tools import last_ai, verdict
from nodes.state import AgentState, Deps, RunContext, run_context
from nodes.turn_guard import RUNAWAY_NOTICE, current_turn, runaway_reminder
from tools.approval import decide
from tools.base import ToolContext
from tools.boundary import wrap
from tools.registry import is_failure, run_batch


def bad_arguments(call: dict[str, Any]) -> str:
    detail = call.get("error") or _json_error(call.get("args"))
    return f"工具执行失败: 参数不是合法的 JSON 对象（{detail}），请修正参数后重试。原始参数: {str(call.get('args'))[:200]}"


# Beyond the reference's failure prefixes (s.8): "读取文件失败: …" and the like, so the CLI
# can show the user which calls went wrong.
_FAILED_HEAD = re.compile(r"^\s*\S{0,12}失败[:：]")


def _json_error(raw: Any) -> str:
    """Streamed invalid calls carry no error text; tell the model what the parser saw."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return str(exc)
    return "需要一个 JSON 对象" if not isinstance(value, dict) else "无法解析"


def tool_message(call_id: str, name: str, text: str) -> ToolMessage:
    status = "error" if is_failure(text) or _FAILED_HEAD.match(text) else "success"
    return ToolMessage(wrap(name, text), tool_call_id=call_id, name=name, status=status)


def make_execute_tools(deps: Deps):
    offloaders: dict[tuple[str, str], ToolResultOffloader] = {}

    def offloader_for(ctx: RunContext) -> ToolResultOffloader | None:
        options = deps.compaction
        if not options.offload:
            return None
        key = (ctx.project_root, ctx.session_id)
        if key not in offloaders:
            offloaders[key] = ToolResultOffloader(ctx.project_root, ctx.session_id, threshold=options.offload_threshold)
        return offloaders[key]

    async def offload(offloader: ToolResultOffloader | None, runnable: list, results: list[str]) -> list[str]:
        """Tier 1 (reference d.4): oversized results go to a file, the model gets a preview."""
        if offloader is None or all(len(r) <= offloader.threshold for r in results):
            return results
        pairs = zip(runnable, results)
        return await asyncio.to_thread(lambda: [offloader.offload_if_oversized(n, a, r) for (_, n, a), r in pairs])

    async def execute_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = run_context(runtime)
        ai = last_ai(state)
        if ai is None:
            return {}
        verdicts = state.get("verdicts") or {}
        approved = set(state.get("approved_all") or ())
        texts: dict[str, str] = {}
        runnable: list[tuple[str, str, dict[str, Any]]] = []
        for call in ai.tool_calls:
            v = verdicts.get(call["id"]) or verdict(decide(call["name"], call["args"], ctx.approval, approved))
            if v["allow"]:
                runnable.append((call["id"], call["name"], v["args"]))
            else:
                texts[call["id"]] = v["text"]
        offloader = offloader_for(ctx)
        tool_ctx = ToolContext(root=Path(ctx.project_root), session_id=ctx.session_id,
                               command_timeout=ctx.command_timeout, offloader=offloader)
        results = await run_batch([(name, args) for _, name, args in runnable], tool_ctx, deps.tools)
        results = await offload(offloader, runnable, results)
        texts.update({cid: text for (cid, _, _), text in zip(runnable, results)})
        messages = [tool_message(c["id"], c["name"], texts[c["id"]]) for c in ai.tool_calls]
        messages += [tool_message(c["id"], c.get("name") or "unknown", bad_arguments(c)) for c in ai.invalid_tool_calls if c.get("id")]
        reminder = runaway_reminder([*current_turn(state["messages"]), *messages], deps.budget.remind_after)
        if reminder is not None:
            get_stream_writer()({"notice": RUNAWAY_NOTICE})
            messages.append(reminder)
        return {"messages": messages, **({"verdicts": {}} if verdicts else {})}

    return execute_tools
