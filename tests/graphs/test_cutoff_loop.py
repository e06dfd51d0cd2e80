"""Cut-off model output in the loop: cut calls never run, unfinished answers are retried."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, ToolMessage

from paicli.tools.policy.audit import AuditLog
from tests.graphs.conftest import Harness, assert_paired
from tests.support.scripted_model import ScriptedChatModel, ai, raw_call, tool_call

ORIGINAL = "def g():\n    return 42\n"
CUT = '{"path": "important.py", "content": "def g(): ret'


def results(prompt) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in prompt if isinstance(m, ToolMessage)}


async def test_unterminated_write_in_an_unfinished_stream_never_runs(project):
    (project / "important.py").write_text(ORIGINAL)
    model = ScriptedChatModel([ai("", raw_call("write_file", CUT, "w1"), finish_reason=None), ai("好的")])
    h = Harness(model, project)
    await h.turn("rewrite g")
    assert (project / "important.py").read_text() == ORIGINAL
    result = results(model.seen[1])["w1"]
    assert result.status == "error" and "模型输出被截断" in result.content and "未执行" in result.content
    assert len(h.notices) == 1 and "截断" in h.notices[0]
    h.check_prompts()
    assert_paired(await h.messages())


async def test_a_length_cut_response_runs_none_of_its_calls_even_complete_ones(project):
    model = ScriptedChatModel([
        ai("", tool_call("write_file", {"path": "a.txt", "content": "whole"}, "c1"),
           raw_call("write_file", '{"path": "b.txt", "content": "ha', "c2"), finish_reason="length"),
        ai("重来"),
    ])
    h = Harness(model, project)
    await h.turn("write two files")
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
    seen = results(model.seen[1])
    assert set(seen) == {"c1", "c2"} and all("模型输出被截断" in m.content for m in seen.values())
    assert len(h.notices) == 1


async def test_in_a_finished_response_only_the_unterminated_call_is_refused(project):
    model = ScriptedChatModel([
        ai("", tool_call("write_file", {"path": "a.txt", "content": "whole"}, "c1"),
           raw_call("write_file", '{"path": "b.txt", "content": "ha', "c2")),
        ai("好"),
    ])
    h = Harness(model, project)
    await h.turn("write two files")
    assert (project / "a.txt").read_text() == "whole" and not (project / "b.txt").exists()
    assert "参数不是合法的 JSON 对象" in results(model.seen[1])["c2"].content
    assert len(h.notices) == 1
    h.check_prompts()


async def test_empty_arguments_reach_the_tool_as_no_arguments(project):
    # Every tool here needs an argument, so the tool's own check answers, not a JSON error.
    model = ScriptedChatModel([ai("", raw_call("list_dir", "", "l1")), ai("看到了")])
    h = Harness(model, project)
    await h.turn("list")
    content = results(model.seen[1])["l1"].content
    assert "路径不能为空" in content and "JSON" not in content and "截断" not in content
    assert h.notices == []


async def test_an_unfinished_answer_is_retried_and_the_good_one_kept(project):
    model = ScriptedChatModel([ai("半截回", finish_reason=None), ai("完整的回答")])
    h = Harness(model, project)
    await h.turn("hi")
    model.assert_consumed()
    assert [m.content for m in await h.messages()] == ["hi", "完整的回答"]
    assert len(h.notices) == 1 and "重试" in h.notices[0]


async def test_an_answer_unfinished_twice_is_a_failure_and_is_not_stored(project):
    model = ScriptedChatModel([ai("半截回", finish_reason=None), ai("又是半截", finish_reason=None)])
    h = Harness(model, project)
    await h.turn("hi")
    state = (await h.graph.aget_state(h.config)).values
    assert state["error"].startswith("❌ 调用 LLM 失败: 模型响应不完整")
    assert [m.content for m in state["messages"]] == ["hi"]


async def test_an_answer_cut_at_the_output_limit_is_kept_with_a_notice(project):
    model = ScriptedChatModel([ai("很长的回答，写到一半", finish_reason="length")])
    h = Harness(model, project)
    await h.turn("hi")
    assert (await h.messages())[-1].content == "很长的回答，写到一半"
    assert len(h.notices) == 1 and "长度上限" in h.notices[0]


async def test_a_refused_call_is_stored_as_an_empty_object_and_its_result_quotes_what_was_sent(project, tmp_path):
    long_cut = '{"path": "important.py", "content": "' + "line\\n" * 100 + "\x1b[2J" + "tail" * 10
    log = AuditLog(tmp_path / "audit")
    model = ScriptedChatModel([ai("", raw_call("write_file", long_cut, "w1"), raw_call("", '{"a"', "n1")),
                               ai("好")])
    h = Harness(model, project, audit=log)
    await h.turn("write it")
    stored = next(m for m in await h.messages() if isinstance(m, AIMessage) and m.invalid_tool_calls)
    assert stored.tool_calls == []
    assert [(c["id"], c["name"], c["args"]) for c in stored.invalid_tool_calls] == \
        [("w1", "write_file", "{}"), ("n1", "invalid_tool_call", "{}")]
    # What the next request replays: the same message, now a valid OpenAI tool call list.
    replayed = next(m for m in model.seen[1] if isinstance(m, AIMessage) and m.invalid_tool_calls)
    assert all(json.loads(c["args"]) == {} for c in replayed.invalid_tool_calls)
    seen = results(model.seen[1])
    assert seen["w1"].name == "write_file" and seen["n1"].name == "invalid_tool_call"
    content = seen["w1"].content
    assert "参数不是合法的 JSON 对象" in content and "write_file / edit_file" in content
    assert long_cut[:200] in content and long_cut[-40:] in content and long_cut not in content
    assert "\x1b" not in content and "\\x1b[2J" + "tail" * 10 in content  # in the last 100, made visible
    assert '{"a"' in seen["n1"].content
    assert log.recent() == []  # nothing ran, so nothing was audited as a write with {}
    assert_paired(await h.messages())
