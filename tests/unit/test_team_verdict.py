"""The reviewer's verdict fails closed (reference s.5 runStep item 5)."""

from __future__ import annotations

import pytest

from paicli.nodes.team.verdict import DEFAULT_FEEDBACK, NO_BOOLEAN, parse_verdict


@pytest.mark.parametrize("reply", [
    '{"approved": true}',
    '```json\n{"approved": true, "summary": "好"}\n```',
    '{"approved": true, "issues": ["小问题"]}',
])
def test_only_the_json_boolean_true_approves(reply):
    verdict = parse_verdict(reply)
    assert verdict.approved and verdict.feedback == ""


@pytest.mark.parametrize("reply", [
    '{"approved": "true"}', '{"approved": 1}', '{"approved": null}', '{"summary": "通过"}',
    '{"approved": "yes", "issues": []}',
])
def test_a_non_boolean_or_missing_approved_is_a_rejection(reply):
    assert parse_verdict(reply).approved is False
    assert parse_verdict(reply).feedback == NO_BOOLEAN
    assert parse_verdict(reply).unreadable  # issue 26: the CLI shows what the reviewer sent


@pytest.mark.parametrize("reply, why", [
    ("通过，结果很好", "回复不是合法的 JSON"),
    ('{"approved": true} 另外说明', "JSON 对象之后还有多余内容"),
    ('```python\n{"approved": true}\n```', "代码块语言必须为 json"),
    ('```json\n{"approved": true}', "代码块围栏不完整"),
    ('{"approved": true, "approved": false}', "JSON 对象中存在重复键：approved"),
    ("", "回复不是合法的 JSON"),
])
def test_an_unparseable_verdict_is_a_rejection_that_says_why(reply, why):
    verdict = parse_verdict(reply)
    assert verdict.approved is False
    assert verdict.feedback.startswith("审查结论无法解析（" + why)
    assert verdict.unreadable
    assert verdict.feedback.endswith("），按未通过处理")


@pytest.mark.parametrize("reply, feedback", [
    ('{"approved": false, "issues": ["缺少测试", "命名不对"], "suggestions": ["加注释"], "summary": "s"}',
     "- 缺少测试\n- 命名不对"),
    ('{"approved": false, "issues": [], "suggestions": ["加注释"], "summary": "s"}', "- 加注释"),
    ('{"approved": false, "issues": ["  ", null], "suggestions": "x", "summary": " 不完整 "}', "不完整"),
    ('{"approved": false, "issues": [{"line": 3}]}', '- {"line": 3}'),
    ('{"approved": false, "summary": ""}', DEFAULT_FEEDBACK),
    ('{"approved": false}', DEFAULT_FEEDBACK),
])
def test_feedback_comes_from_issues_then_suggestions_then_summary(reply, feedback):
    verdict = parse_verdict(reply)
    assert verdict.approved is False and verdict.feedback == feedback


def test_a_readable_rejection_is_not_unreadable():
    verdict = parse_verdict('{"approved": false, "issues": ["缺测试"]}')
    assert not verdict.approved and not verdict.unreadable and verdict.feedback == "- 缺测试"


def test_why_a_reply_is_not_json_is_said_in_chinese():
    # issue 26 item 8: the json module's own words ("Expecting value") are English; the place is enough
    assert parse_verdict("通过，结果很好").feedback == "审查结论无法解析（回复不是合法的 JSON：第 1 行第 1 列有误），按未通过处理"
