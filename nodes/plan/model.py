"""The plan: a DAG of tasks, parsed from what the planner model wrote (reference s.4).

Plain data on purpose: a plan lives in graph state (and so in the ledger), as a dict
``{"id", "goal", "summary", "tasks": [...], "order": [...]}`` whose tasks are
``{"id", "description", "type", "dependencies", "status", "result"}``. The model's JSON is
untrusted: every rule of the reference is checked here, with its error text, and the ids are
renumbered so nothing the model named reaches a namespace or a file.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from paicli.nodes import dag

TYPES = ("FILE_READ", "FILE_WRITE", "COMMAND", "ANALYSIS", "VERIFICATION")
PENDING, RUNNING, COMPLETED, FAILED, SKIPPED = "PENDING", "RUNNING", "COMPLETED", "FAILED", "SKIPPED"

# reference (s.4): the simple-goal shortcut, no model call
_JOINERS = ("然后", "并且", "并", "再", "最后", "同时", "先", "之后", "接着", "以及")
_SIMPLE_VERBS = ("列出", "查看", "读取", "显示", "执行", "运行", "搜索", "当前目录", "文件")
SIMPLE_MAX_CHARS = 30
_FENCE = re.compile(r"```json\s*|```\s*")


class PlanError(ValueError):
    """The planner's reply is not a usable plan; the text is the reference's (s.4)."""


def simple_type(goal: str) -> str:
    if "读取" in goal or "打开" in goal or ("查看" in goal and "文件" in goal):
        return "FILE_READ"
    if any(w in goal for w in ("写入", "修改", "创建文件")):
        return "FILE_WRITE"
    if any(w in goal for w in ("分析", "总结", "解释")):
        return "ANALYSIS"
    if "验证" in goal or "检查" in goal:
        return "VERIFICATION"
    return "COMMAND"


def simple_plan(goal: str, plan_id: str) -> dict[str, Any] | None:
    """A one-task plan for a short, single-step goal, or None when the goal needs planning."""
    text = goal.strip()
    if (not text or any(w in text for w in _JOINERS) or len(text) > SIMPLE_MAX_CHARS
            or not any(w in text for w in _SIMPLE_VERBS)):
        return None
    task = new_task("task_1", text, simple_type(text), [])
    return {"id": plan_id, "goal": goal, "summary": f"直接执行简单任务：{goal}", "tasks": [task], "order": ["task_1"]}


def new_task(task_id: str, description: str, kind: str, dependencies: list[str]) -> dict[str, Any]:
    return {"id": task_id, "description": description, "type": kind, "dependencies": dependencies,
            "status": PENDING, "result": ""}


def parse_plan(reply: str, goal: str, plan_id: str) -> dict[str, Any]:
    if not reply or not reply.strip():
        raise PlanError("计划必须包含非空 JSON 对象")
    try:
        data = json.loads(_FENCE.sub("", reply).strip())
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise PlanError("计划必须是 JSON 对象")
    items = data.get("tasks")
    if not isinstance(items, list) or not items:
        raise PlanError("计划 tasks 必须是非空数组")
    renamed = _first_pass(items)
    tasks = [new_task(renamed[item["id"]], item.get("description") or "", _kind(item.get("type")),
                      _dependencies(item, renamed)) for item in items]
    summary = data.get("summary")
    plan = {"id": plan_id, "goal": goal, "summary": summary if isinstance(summary, str) else "", "tasks": tasks}
    plan["order"] = topological_order(tasks)
    return plan


def _first_pass(items: list[Any]) -> dict[str, str]:
    """Original id -> ``task_<k>``; checks ids and descriptions (pass 1)."""
    renamed: dict[str, str] = {}
    for k, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"].strip():
            raise PlanError("计划任务必须具有非空字符串 id")
        if item["id"] in renamed:
            raise PlanError("计划中存在重复任务 id")
        if "description" in item and item["description"] is not None and not isinstance(item["description"], str):
            raise PlanError("计划任务 description 必须是字符串")
        renamed[item["id"]] = f"task_{k}"
    return renamed


def _kind(value: Any) -> str:
    kind = value.upper() if isinstance(value, str) else ""
    return kind if kind in TYPES else "ANALYSIS"


def _dependencies(item: dict[str, Any], renamed: dict[str, str]) -> list[str]:
    deps = item.get("dependencies")
    if deps is None:
        return []
    if not isinstance(deps, list):
        raise PlanError("计划 dependencies 必须是任务 id 数组")
    out: list[str] = []
    for dep in deps:
        if not isinstance(dep, str) or dep not in renamed:
            raise PlanError("计划依赖必须引用已声明的任务 id")
        if renamed[dep] not in out:
            out.append(renamed[dep])
    return out


def topological_order(tasks: list[dict[str, Any]]) -> list[str]:
    """DFS in insertion order, dependencies first; a cycle is refused."""
    by_id = {t["id"]: t for t in tasks}
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(task_id: str) -> None:
        if state.get(task_id) == "done":
            return
        if state.get(task_id) == "active":
            raise PlanError("计划中存在循环依赖")
        state[task_id] = "active"
        for dep in by_id[task_id]["dependencies"]:
            visit(dep)
        state[task_id] = "done"
        order.append(task_id)

    for task in tasks:
        visit(task["id"])
    return order


def tasks_in_order(plan: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {t["id"]: t for t in plan["tasks"]}
    return [by_id[i] for i in plan["order"]]


def ready(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """PENDING tasks whose dependencies all COMPLETED, in execution order (``paicli.nodes.dag``)."""
    return dag.ready(tasks_in_order(plan), status_reader(plan), pending=PENDING, completed=COMPLETED)


def status_reader(plan: dict[str, Any]) -> Callable[[str], str]:
    """How a task's status is read (``paicli.nodes.dag.StatusOf``): from the plan's tasks."""
    statuses = {t["id"]: t["status"] for t in plan["tasks"]}
    return lambda task_id: statuses.get(task_id, PENDING)


def waves(plan: dict[str, Any]) -> list[list[str]]:
    """For the summary: repeatedly every task whose dependencies are all in earlier waves."""
    placed: set[str] = set()
    out: list[list[str]] = []
    remaining = tasks_in_order(plan)
    while remaining:
        wave = [t["id"] for t in remaining if set(t["dependencies"]) <= placed]
        if not wave:
            break
        out.append(wave)
        placed.update(wave)
        remaining = [t for t in remaining if t["id"] not in placed]
    return out


def progress(plan: dict[str, Any]) -> dag.Progress:
    return dag.progress(plan["tasks"], status_reader(plan), completed=COMPLETED)


def dependents(plan: dict[str, Any], task_id: str) -> list[str]:
    """Every task that depends on ``task_id``, directly or not, in execution order."""
    return dag.dependents(tasks_in_order(plan), task_id)


def leaves(plan: dict[str, Any]) -> list[dict[str, Any]]:
    needed = {d for t in plan["tasks"] for d in t["dependencies"]}
    return [t for t in tasks_in_order(plan) if t["id"] not in needed]
