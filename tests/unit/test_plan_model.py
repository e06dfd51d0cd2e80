"""The plan's parsing and validation rules (reference s.4), one error text each, the simple-goal
shortcut, the review input, the replan setting."""

from __future__ import annotations

import json

import pytest

from paicli.nodes.plan.model import PlanError, parse_plan, simple_plan, waves
from paicli.nodes.plan.text import plan_review_answer, summarize
from paicli.config.settings import max_replans


def parse(data) -> dict:
    return parse_plan(data if isinstance(data, str) else json.dumps(data), "goal", "plan_1")


@pytest.mark.parametrize("reply, error", [
    ("", "计划必须包含非空 JSON 对象"),
    ("  \n", "计划必须包含非空 JSON 对象"),
    ("[1, 2]", "计划必须是 JSON 对象"),
    ("not json", "计划必须是 JSON 对象"),
    ({"tasks": []}, "计划 tasks 必须是非空数组"),
    ({"tasks": "a"}, "计划 tasks 必须是非空数组"),
    ({"summary": "s"}, "计划 tasks 必须是非空数组"),
    ({"tasks": ["a"]}, "计划任务必须具有非空字符串 id"),
    ({"tasks": [{"id": " "}]}, "计划任务必须具有非空字符串 id"),
    ({"tasks": [{"id": 1}]}, "计划任务必须具有非空字符串 id"),
    ({"tasks": [{"id": "a"}, {"id": "a"}]}, "计划中存在重复任务 id"),
    ({"tasks": [{"id": "a", "description": 3}]}, "计划任务 description 必须是字符串"),
    ({"tasks": [{"id": "a", "dependencies": "b"}]}, "计划 dependencies 必须是任务 id 数组"),
    ({"tasks": [{"id": "a", "dependencies": ["zz"]}]}, "计划依赖必须引用已声明的任务 id"),
    ({"tasks": [{"id": "a", "dependencies": [1]}]}, "计划依赖必须引用已声明的任务 id"),
    ({"tasks": [{"id": "a", "dependencies": ["b"]}, {"id": "b", "dependencies": ["a"]}]}, "计划中存在循环依赖"),
    ({"tasks": [{"id": "a", "dependencies": ["a"]}]}, "计划中存在循环依赖"),
])
def test_each_invalid_plan_is_refused_with_the_reference_text(reply, error):
    with pytest.raises(PlanError) as caught:
        parse(reply)
    assert str(caught.value) == error


def test_fences_are_removed_ids_renumbered_types_defaulted_and_order_topological():
    reply = ('好的\n```json\n' + json.dumps({"summary": "s", "tasks": [
        {"id": "final", "description": "合并", "type": "verification", "dependencies": ["x", "y", "x"]},
        {"id": "x", "description": "读", "type": "file_read"},
        {"id": "y", "description": "想", "type": "PLANNING"}]}) + "\n```")
    plan = parse_plan(reply.replace("好的\n", ""), "goal", "plan_9")
    assert [(t["id"], t["type"], t["dependencies"]) for t in plan["tasks"]] == [
        ("task_1", "VERIFICATION", ["task_2", "task_3"]), ("task_2", "FILE_READ", []), ("task_3", "ANALYSIS", [])]
    assert plan["order"] == ["task_2", "task_3", "task_1"]
    assert waves(plan) == [["task_2", "task_3"], ["task_1"]]
    assert plan["id"] == "plan_9" and plan["summary"] == "s"


@pytest.mark.parametrize("goal, kind", [
    ("读取 README.md", "FILE_READ"), ("查看 setup.py 文件", "FILE_READ"), ("列出当前目录", "COMMAND"),
    ("运行测试", "COMMAND"), ("搜索 TODO 并解释", None), ("执行 make 然后部署", None),
    ("显示" + "很" * 30, None), ("修复登录问题", None), ("检查文件权限", "VERIFICATION"), ("修改文件头", "FILE_WRITE"),
    ("分析文件结构", "ANALYSIS"),
])
def test_simple_goals_become_one_task_without_the_model(goal, kind):
    plan = simple_plan(goal, "plan_1")
    if kind is None:
        assert plan is None
        return
    assert [(t["id"], t["type"], t["description"]) for t in plan["tasks"]] == [("task_1", kind, goal.strip())]
    assert plan["summary"] == f"直接执行简单任务：{goal}"


def test_summary_names_first_and_last_waves():
    plan = parse({"tasks": [{"id": str(i)} for i in range(7)] + [{"id": "z", "dependencies": ["0", "1"]}]})
    text = summarize(plan)
    assert "任务数: 8 | 并行批次: 2 | 当前可执行: 7 | 状态: CREATED" in text
    assert "首批执行: task_1, task_2, task_3, task_4, task_5 等 7 个任务" in text
    assert text.endswith("最终收敛: task_8")


@pytest.mark.parametrize("raw, decision", [
    ("", ("execute", "")), ("  Y ", ("execute", "")), ("/run", ("execute", "")), ("\u001b", ("cancel", "")),
    ("ESC", ("cancel", "")), ("/cancel", ("cancel", "")), ("  加上测试 ", ("supplement", "加上测试")),
    ({"action": "cancel"}, ("cancel", "")), ({"text": "改用 pytest"}, ("supplement", "改用 pytest")), (None, ("execute", "")),
])
def test_review_input_is_parsed_as_the_reference_does(raw, decision):
    assert plan_review_answer(raw) == decision


@pytest.mark.parametrize("raw, value", [(None, 2), ("5", 5), ("-1", 0), ("many", 2), (" 0 ", 0)])
def test_plan_max_replans_setting(raw, value):
    assert max_replans(raw) == value
