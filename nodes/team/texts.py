"""What the user reads during a team run (reference s.5), in one place.

Progress lines go to the front end as notices (stderr in ``-p``); ``final_text`` is the run's
result (stdout in ``-p``). Model-facing texts are prompt files, not here (prompts/team/).
"""

from __future__ import annotations

from typing import Any

from paicli.nodes.team.plan import TeamStep
from paicli.nodes.team.schedule import COMPLETED, FAILED, MAX_WORKERS, all_completed, status

# reference s.5 Flow, verbatim.
PLANNING_HEADING = "📋 第一阶段：规划"
PLANNER_WORKING = "🧑‍💼 规划者正在分析任务...\n"
PLAN_HEADING = "📋 执行计划"
EXECUTION_HEADING = "⚡ 第二阶段：执行"
PLANNER_FAILED = "❌ 规划阶段失败，规划者 LLM 调用出错：{error}"
PLAN_BLANK = "❌ 规划失败：规划者未能生成有效计划"
# The reference's text is the first and last line; the reason line between is ours, so the user
# sees which rule the plan broke.
PLAN_REJECTED = "❌ 规划失败：无法解析执行计划\n原因：{reason}\n原始输出:\n{reply}"
REPLY_PREVIEW_CHARS = 1000  # issue 26: the planner's rejected reply is shown up to this
STEP_CANCELLED = "用户取消"  # reference s.7: a cancelled step's failure
EMPTY_RESULT = "执行结果为空"

HEADERS = {
    "completed": "✅ 多 Agent 协作任务完成！\n\n",
    "failed": "⚠️ 多 Agent 协作任务未完全完成，存在失败步骤。\n\n",
    "partial": "⚠️ 多 Agent 协作任务部分完成，仍有未执行步骤。\n\n",
}
SUMMARY_HEADING = "📋 执行总结：\n"
SUMMARY_RESULT_CHARS = 120  # reference s.5 item 7: the first 120 chars of each result


def plan_lines(steps: list[TeamStep]) -> list[str]:
    return [PLAN_HEADING] + [f"  ⏳ [{s['id']}] {s['description']} (依赖: {', '.join(s['dependencies']) or '无'})"
                             for s in steps]


def wave_line(number: int, size: int) -> str:
    return f"⚡ 批次 #{number}：{size} 个独立步骤并行执行（最多 {MAX_WORKERS} 个并发 Worker）\n"


def step_started(worker: str, step: TeamStep) -> str:
    return f"🛠️ {worker} 执行步骤 [{step['id']}]: {step['description']}"


def step_cancelled(step_id: str) -> str:
    return f"⏹️ 步骤 [{step_id}] 已取消\n"


def worker_failed(step_id: str, error: str) -> str:
    return f"❌ 步骤 [{step_id}] 执行失败：{error}\n"


def worker_empty(step_id: str) -> str:
    return f"❌ 步骤 [{step_id}] 执行失败：结果为空\n"


def reviewing(reviewer: str, step_id: str) -> str:
    return f"🔍 {reviewer} 正在审查步骤 [{step_id}] 的结果..."


def reviewer_failed(step_id: str) -> str:
    return f"⚠️ 步骤 [{step_id}] 审查阶段 LLM 调用失败，保留当前执行结果\n"


def approved(step_id: str, retried: bool) -> str:
    return f"✅ 步骤 [{step_id}] 重试后审查通过\n" if retried else f"✅ 步骤 [{step_id}] 审查通过\n"


def unreadable_verdict(reviewer: str, step_id: str, preview: str) -> str:
    """issue 26: a verdict that could not be read is shown as the reviewer sent it (bounded)."""
    return f"⚠️ {reviewer} 对步骤 [{step_id}] 的审查结论无法读取。{preview}"


def rejected(step_id: str, feedback: str) -> str:
    return f"⚠️ 步骤 [{step_id}] 审查未通过，正在重新执行...\n   反馈: {feedback}\n"


def retries_exhausted(step_id: str) -> str:
    return f"⚠️ 步骤 [{step_id}] 超过最大重试次数，保留当前结果\n"


def interrupted(step_id: str) -> str:
    return f"❌ 步骤 [{step_id}] 被中断\n"


def skipped(step: TeamStep) -> str:
    return f"⏭️ 步骤 [{step['id']}] 因前置步骤失败被跳过: {step['description']}"


def bounded_reply(reply: str) -> str:
    if len(reply) <= REPLY_PREVIEW_CHARS:
        return reply
    return f"{reply[:REPLY_PREVIEW_CHARS]}…（共 {len(reply)} 字符，其余未显示）"


def run_status(steps: list[TeamStep], records: dict[str, Any]) -> str:
    """``completed`` | ``failed`` | ``partial`` (reference s.5 item 7)."""
    if all_completed(steps, records):
        return "completed"
    return "failed" if any(status(records, s["id"]) == FAILED for s in steps) else "partial"


def final_text(steps: list[TeamStep], records: dict[str, Any]) -> str:
    lines = [HEADERS[run_status(steps, records)] + SUMMARY_HEADING]
    icons = {COMPLETED: "✅", FAILED: "❌"}
    for step in steps:
        record = records.get(step["id"]) or {}
        lines.append(f"[{step['id']}] {icons.get(status(records, step['id']), '⏳')} {step['description']}\n")
        result = str(record.get("result") or "").strip()
        if result:
            shown = result[:SUMMARY_RESULT_CHARS] + ("..." if len(result) > SUMMARY_RESULT_CHARS else "")
            lines.append(f"   结果：{shown}\n")
    return "".join(lines).rstrip("\n")
