"""What a plan run says: the review summary and table, a task's input, the final result
(reference s.4). Texts are the reference's."""

from __future__ import annotations

from typing import Any

from paicli.nodes.plan.model import COMPLETED, FAILED, leaves, progress, ready, tasks_in_order, waves

GOAL_CHARS = 48
FIRST_IDS = 5
DESCRIPTION_CHARS = 50
ICONS = {"PENDING": "⏳", "RUNNING": "🔄", "COMPLETED": "✅", "FAILED": "❌", "SKIPPED": "⏭️"}

DONE = "✅ 计划执行完成！"
PARTIAL = "⚠️ 计划部分完成，有任务失败。\n"
STUCK = "⚠️ 计划未能继续推进，存在未满足依赖的任务。"
PLAN_REVIEW_CANCELLED = "⏹️ 已取消本次计划执行。"


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def summarize(plan: dict[str, Any], status: str = "CREATED") -> str:
    groups = waves(plan)
    first = groups[0] if groups else []
    shown = ", ".join(first) if len(first) <= FIRST_IDS else f"{', '.join(first[:FIRST_IDS])} 等 {len(first)} 个任务"
    lines = ["📋 计划摘要", f"   - 目标: {one_line(plan['goal'], GOAL_CHARS)}",
             f"   - 任务数: {len(plan['tasks'])} | 并行批次: {len(groups)} | 当前可执行: {len(ready(plan))} | 状态: {status}",
             f"   - 首批执行: {shown}"]
    if len(groups) > 1:
        lines.append(f"   - 最终收敛: {', '.join(groups[-1])}")
    return "\n".join(lines)


def visualize(plan: dict[str, Any], status: str = "CREATED") -> str:
    rule = "─" * 60
    rows = [f"┌{rule}", f"│ 📋 {one_line(plan.get('summary') or plan['goal'], GOAL_CHARS)}", f"├{rule}"]
    for n, t in enumerate(tasks_in_order(plan), 1):
        deps = ", ".join(t["dependencies"]) or "无"
        rows.append(f"│ {n}. {ICONS.get(t['status'], '?')} {t['id']} [{t['type']}] 依赖: {deps}")
        rows.append(f"│    {one_line(t['description'], DESCRIPTION_CHARS)}")
    rows += [f"└{rule}", f"   进度: {progress(plan).fraction * 100:.0f}% | 状态: {status}"]
    return "\n".join(rows)


def task_rows(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan as data for its review (issue 26): each task in execution order, with the
    wave (1, 2, ...) it runs in, under the payload's kept key ``batch``."""
    wave_of = {task_id: n for n, wave in enumerate(waves(plan), 1) for task_id in wave}
    return [{"id": t["id"], "description": t["description"], "type": t["type"],
             "dependencies": list(t["dependencies"]), "batch": wave_of.get(t["id"])} for t in tasks_in_order(plan)]


def task_input(plan: dict[str, Any], task: dict[str, Any]) -> str:
    """The task's first user message (reference s.4 per-task execution 3). The task's type and
    description lead it: they stay out of the system prompt, which all tasks share."""
    by_id = {t["id"]: t for t in plan["tasks"]}
    lines = [f"当前任务类型：{task['type']}", f"任务描述：{task['description']}", "",
             f"总目标：{plan['goal']}", f"当前任务：{task['description']}"]
    if not task["dependencies"]:
        lines.append("依赖任务：无")
    else:
        lines.append("依赖任务结果：")
        for dep in (by_id[d] for d in task["dependencies"]):
            lines += [f"- {dep['id']} / {dep['description']} / 状态={dep['status']}", dep["result"]]
    urls = trusted_urls(plan, task)
    if urls:
        lines += ["依赖分支经 web_search 验证的 URL（可供当前任务抓取/导航）：", *(f"- {u}" for u in urls)]
    lines.append("请执行此任务。如果是ANALYSIS或VERIFICATION类型，请基于以上上下文直接给出结果。")
    return "\n".join(lines)


def trusted_urls(plan: dict[str, Any], task: dict[str, Any]) -> list[str]:
    """What the task's dependencies' web_search grounded (reference s.4 per-task 1)."""
    by_id = {t["id"]: t for t in plan["tasks"]}
    return sorted({u for d in task["dependencies"] for u in by_id[d].get("trusted_urls") or ()})


def result_lines(tasks: list[dict[str, Any]]) -> list[str]:
    return [f"[{t['id']}] {t['result']}" for t in tasks if t["result"].strip()]


def final_text(plan: dict[str, Any], failures: list[str]) -> str:
    tasks = tasks_in_order(plan)
    if any(t["status"] == FAILED for t in tasks):
        done = result_lines([t for t in tasks if t["status"] == COMPLETED])
        return PARTIAL + "已完成的任务结果:\n" + "".join(line + "\n" for line in done) + "\n" + "\n".join(failures)
    if not all(t["status"] == COMPLETED for t in tasks):
        return STUCK
    lines = result_lines(leaves(plan)) or result_lines(tasks[-1:])
    return DONE + ("\n" + "\n".join(lines) if lines else "")


def replan_goal(plan: dict[str, Any], reason: str) -> str:
    done = "".join(f"- {t['id']}: {t['description']}\n" for t in tasks_in_order(plan) if t["status"] == COMPLETED)
    return f"原任务: {plan['goal']}\n失败原因: {reason}\n已完成的任务:\n{done}\n请制定新的执行计划，避开之前的问题。"


def plan_review_answer(raw: Any) -> tuple[str, str]:
    """PlanReviewInputParser (reference s.4): ("execute" | "cancel" | "supplement", text)."""
    if isinstance(raw, dict):  # Studio: {"action": ..., "text": ...} is accepted too
        action = str(raw.get("action") or "").lower()
        if action in ("execute", "cancel"):
            return action, ""
        raw = raw.get("text") or ""
    text = raw if isinstance(raw, str) else ""
    if text == "\u001b":
        return "cancel", ""
    word = text.strip()
    if word.lower() in ("", "y", "yes", "run", "/run", "execute"):
        return "execute", ""
    if word.lower() in ("cancel", "esc", "/cancel"):
        return "cancel", ""
    return "supplement", word
