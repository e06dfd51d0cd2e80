"""`paicli -p` against cut-off and dropped streams: what the user sees, what runs, what the
model is told next, and the exit code."""

from __future__ import annotations

import json

from tests.cli.test_oneshot import call, problem_lines, tool_results
from tests.support.openai_server import Disconnect, Reply

ORIGINAL = "def g():\n    return 42\n"
CUT = '{"path": "important.py", "content": "def g(): ret'


def notices(stderr: str) -> list[str]:
    return [line for line in problem_lines(stderr) if line.startswith("⚠️")]


def test_unterminated_write_in_an_unfinished_stream_leaves_the_file_alone(server, run_paicli, project):
    (project / "important.py").write_text(ORIGINAL, encoding="utf-8")
    server.script = [Reply("", tool_calls=[call("write_file", CUT, "w1")], finish_reason=None, done=False),
                     Reply("我会重新完整地写。")]
    done = run_paicli("-p", "rewrite g")
    assert done.returncode == 0, done.stderr
    assert (project / "important.py").read_text(encoding="utf-8") == ORIGINAL
    [result] = tool_results(server.requests[1])
    assert result["tool_call_id"] == "w1" and "模型输出被截断" in result["content"] and "未执行" in result["content"]
    [notice] = notices(done.stderr)
    assert "截断" in notice and "1 个工具调用未执行" in notice
    assert done.stdout == "我会重新完整地写。\n"
    server.assert_consumed()


def test_a_call_in_a_response_cut_at_the_length_limit_does_not_run(server, run_paicli, project):
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "new.txt", "content": "x"})],
                           finish_reason="length"),
                     Reply("好")]
    done = run_paicli("-p", "write new.txt")
    assert done.returncode == 0, done.stderr
    assert not (project / "new.txt").exists()
    assert "模型输出被截断" in tool_results(server.requests[1])[0]["content"]
    assert len(notices(done.stderr)) == 1


def test_an_answer_unfinished_twice_fails_without_printing_the_partial_text(server, run_paicli):
    partial = Reply("这是一个没有写完的回", finish_reason=None, done=False)
    server.script = [partial, partial]
    done = run_paicli("-p", "hi")
    assert done.returncode == 1
    assert "没有写完" not in done.stdout and done.stdout == ""
    assert "❌ 调用 LLM 失败: 模型响应不完整" in done.stderr
    server.assert_consumed()


def test_an_answer_unfinished_once_is_retried_and_the_good_answer_printed(server, run_paicli):
    server.script = [Reply("这是一个没有写完的回", finish_reason=None, done=False), Reply("完整的回答。")]
    done = run_paicli("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "完整的回答。\n"
    assert any("重试" in line for line in notices(done.stderr))
    server.assert_consumed()


def test_an_answer_cut_at_the_length_limit_is_printed_with_a_notice(server, run_paicli):
    server.script = [Reply("很长的回答写到这里", finish_reason="length")]
    done = run_paicli("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "很长的回答写到这里\n"
    [notice] = notices(done.stderr)
    assert "长度上限" in notice


def test_a_connection_dropped_mid_stream_is_retried(server, run_paicli):
    server.script = [Reply("半截", drop_after=2), Reply("重连后的回答")]
    done = run_paicli("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "重连后的回答\n"
    [notice] = notices(done.stderr)
    assert "连接" in notice and "中断" in notice and "重试" in notice
    server.assert_consumed()


def test_a_connection_dropped_mid_stream_twice_is_reported_as_a_dropped_connection(server, run_paicli):
    server.script = [Reply("半截", drop_after=2), Reply("又半截", drop_after=2)]
    done = run_paicli("-p", "hi")
    assert done.returncode == 1
    [error] = [line for line in problem_lines(done.stderr) if line.startswith("❌")]
    assert "连接" in error and "中断" in error and "PAICLI_BASE_URL" not in error
    assert done.stdout == ""
    server.assert_consumed()


def test_a_request_dropped_before_any_answer_is_retried_by_the_client_then_named(server, run_paicli):
    server.script = [Disconnect()] * 4  # the client's first try and its 3 retries
    done = run_paicli("-p", "hi")
    assert done.returncode == 1
    [error] = [line for line in problem_lines(done.stderr) if line.startswith("❌")]
    assert "连接" in error and "中断" in error and "PAICLI_BASE_URL" not in error
    server.assert_consumed()


# --- a refused call must not poison the history ------------------------------------------------
SESSION = "cutoff-history"
LONG_CUT = '{"path": "important.py", "content": "' + "x = 1\\n" * 200 + 'def g(): ret'


def past_calls(request: dict) -> list[dict]:
    return [c for m in request["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]


def test_a_refused_call_is_replayed_as_a_json_object_and_its_result_shows_what_was_sent(server, run_paicli, project):
    (project / "important.py").write_text(ORIGINAL, encoding="utf-8")
    server.script = [Reply("", tool_calls=[call("write_file", LONG_CUT, "w1")], finish_reason=None, done=False),
                     Reply("我会分几次写。"), Reply("记得，上次被截断了。")]
    first = run_paicli("-p", "rewrite g", "--session", SESSION)
    assert first.returncode == 0, first.stderr
    [sent] = past_calls(server.requests[1])
    assert sent["id"] == "w1" and sent["function"]["name"] == "write_file"
    assert json.loads(sent["function"]["arguments"]) == {}
    [result] = tool_results(server.requests[1])
    assert result["tool_call_id"] == "w1" and "模型输出被截断" in result["content"]
    assert "分多次" in result["content"] or "拆成多次" in result["content"]
    assert LONG_CUT[:200] in result["content"] and LONG_CUT[-100:] in result["content"]
    assert LONG_CUT not in result["content"] and f"共 {len(LONG_CUT)} 个字符" in result["content"]
    # The next run resumes the session from disk: its history is still acceptable.
    second = run_paicli("-p", "还记得吗？", "--session", SESSION)
    assert second.returncode == 0, second.stderr
    [again] = past_calls(server.requests[2])
    assert again["id"] == "w1" and json.loads(again["function"]["arguments"]) == {}
    assert [m["tool_call_id"] for m in server.requests[2]["messages"] if m["role"] == "tool"] == ["w1"]
    assert (project / "important.py").read_text(encoding="utf-8") == ORIGINAL
    server.assert_consumed()


def test_a_refused_call_without_a_name_is_replayed_under_a_placeholder_name(server, run_paicli):
    server.script = [Reply("", tool_calls=[{"name": "", "arguments": '{"path": "a', "id": "n1"}]), Reply("好")]
    done = run_paicli("-p", "hi")
    assert done.returncode == 0, done.stderr
    [sent] = past_calls(server.requests[1])
    assert sent["function"]["name"] == "invalid_tool_call" and json.loads(sent["function"]["arguments"]) == {}
    [result] = tool_results(server.requests[1])
    assert result["tool_call_id"] == "n1" and "缺少工具名称" in result["content"] and '{"path": "a' in result["content"]
