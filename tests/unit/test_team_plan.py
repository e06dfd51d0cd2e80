"""Strict team plan parsing (reference s.5 item 3): one JSON object or nothing runs."""

from __future__ import annotations

import json

import pytest

from paicli.nodes.team.plan import PlanError, parse_team_plan
from paicli.nodes.team.reply import ReplyError, parse_object, unfence

TWO = '{"summary": "s", "steps": [{"id": "a", "description": "读", "type": "file_read"}, ' \
      '{"id": "b", "description": "写", "dependencies": ["a"]}]}'


def rejected(reply: str) -> str:
    with pytest.raises(PlanError) as caught:
        parse_team_plan(reply)
    return str(caught.value)


def test_a_valid_plan_is_renumbered_and_its_dependencies_follow():
    plan = parse_team_plan(TWO)
    assert plan["summary"] == "s"
    assert [s["id"] for s in plan["steps"]] == ["step_1", "step_2"]
    assert plan["steps"][1]["dependencies"] == ["step_1"]
    assert plan["steps"][0]["type"] == "FILE_READ"
    assert plan["steps"][1]["type"] == "COMMAND"  # reference s.5: the default type


def test_one_json_fence_around_the_whole_reply_is_tolerated():
    assert len(parse_team_plan(f"```json\n{TWO}\n```")["steps"]) == 2
    assert len(parse_team_plan(f"  ```\n{TWO}\n```  \n")["steps"]) == 2
    assert len(parse_team_plan(f"```JSON\n{TWO}\n```")["steps"]) == 2


@pytest.mark.parametrize("reply, message", [
    (f"```python\n{TWO}\n```", "代码块语言必须为 json"),
    (f"```yaml\n{TWO}\n```", "代码块语言必须为 json"),
    (f"```json\n{TWO}\n", "代码块围栏不完整"),
    (f"```json\n{TWO}", "代码块围栏不完整"),
    (f"```json\n{TWO}\n```\n补充说明", "JSON 对象之后还有多余内容"),
    (f"{TWO} 以上就是计划", "JSON 对象之后还有多余内容"),
    (f"{TWO}\n{TWO}", "JSON 对象之后还有多余内容"),
    ('{"steps": [{"id": "a"}], "steps": [{"id": "b"}]}', "JSON 对象中存在重复键：steps"),
    ('{"steps": [{"id": "a", "id": "b"}]}', "JSON 对象中存在重复键：id"),
    (f"计划如下：{TWO}", "回复不是合法的 JSON"),
    ('[{"id": "a"}]', "回复必须是单个 JSON 对象"),
    ('{"steps": [{"id": "a", "n": NaN}]}', "JSON 中不允许 NaN"),
    ('{"steps": []}', "计划必须包含非空 steps 数组"),
    ('{"summary": "s"}', "计划必须包含非空 steps 数组"),
    ('{"steps": "a, b"}', "计划必须包含非空 steps 数组"),
    ('{"steps": [{"description": "x"}]}', "计划步骤必须具有非空字符串 id"),
    ('{"steps": [{"id": "  "}]}', "计划步骤必须具有非空字符串 id"),
    ('{"steps": [{"id": 1}]}', "计划步骤必须具有非空字符串 id"),
    ('{"steps": ["step_1"]}', "计划步骤必须具有非空字符串 id"),
    ('{"steps": [{"id": "a"}, {"id": "a"}]}', "计划中存在重复步骤 id：a"),
    ('{"steps": [{"id": "a", "description": 3}]}', "计划步骤 description 必须是字符串"),
    ('{"steps": [{"id": "a", "type": ["COMMAND"]}]}', "计划步骤 type 必须是字符串"),
    ('{"steps": [{"id": "a", "dependencies": "b"}]}', "计划 dependencies 必须是步骤 id 数组"),
    ('{"steps": [{"id": "a", "dependencies": [1]}]}', "计划 dependencies 必须是步骤 id 数组"),
    ('{"steps": [{"id": "a", "dependencies": ["zz"]}]}', "计划依赖必须引用已声明的步骤 id：zz"),
    ('{"steps": [{"id": "a", "dependencies": ["b"]}, {"id": "b", "dependencies": ["a"]}]}', "计划中存在循环依赖"),
    ('{"steps": [{"id": "a", "dependencies": ["a"]}]}', "计划中存在循环依赖"),
])
def test_each_broken_rule_rejects_the_whole_plan_with_its_message(reply, message):
    assert rejected(reply).startswith(message)


def test_legacy_tasks_are_read_when_steps_is_missing_or_empty():
    legacy = '{"tasks": [{"id": "task_1"}, {"id": "task_2", "dependencies": ["task_1"]}]}'
    assert [s["dependencies"] for s in parse_team_plan(legacy)["steps"]] == [[], ["step_1"]]
    both = '{"steps": [], "tasks": [{"id": "t"}]}'
    assert [s["id"] for s in parse_team_plan(both)["steps"]] == ["step_1"]


def test_dependencies_are_deduplicated_and_null_fields_take_their_defaults():
    reply = '{"steps": [{"id": "a", "description": null, "type": null}, {"id": "b", "dependencies": ["a", "a", " a "]}]}'
    steps = parse_team_plan(reply)["steps"]
    assert steps[0]["description"] == "" and steps[0]["type"] == "COMMAND"
    assert steps[1]["dependencies"] == ["step_1"]


def test_ids_are_compared_trimmed_and_dependencies_point_at_original_ids_not_positions():
    reply = '{"steps": [{"id": "step_2"}, {"id": "step_1", "dependencies": ["step_2"]}]}'
    steps = parse_team_plan(reply)["steps"]
    assert [(s["id"], s["dependencies"]) for s in steps] == [("step_1", []), ("step_2", ["step_1"])]
    assert rejected('{"steps": [{"id": "x"}, {"id": " x "}]}').startswith("计划中存在重复步骤 id")


def test_a_hostile_id_is_shown_on_one_bounded_line():
    reply = json.dumps({"steps": [{"id": "a", "dependencies": ["\n".join(["evil"] * 100)]}]})
    message = rejected(reply)
    assert "\n" not in message and len(message) < 100


def test_an_empty_fenced_body_and_a_blank_reply_are_not_objects():
    for reply in ("```json\n```", "", "   "):
        with pytest.raises(ReplyError):
            parse_object(reply)


def test_unfence_leaves_an_unfenced_reply_as_it_is():
    assert unfence("  {\"a\": 1}\n") == '{"a": 1}'
    assert unfence("```\n{}\n```") == "{}"
