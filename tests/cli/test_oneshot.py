"""`paicli -p` end to end: a real subprocess, the real model client, a scripted server.

Each test checks what a user or a script would: the exit code, the answer alone on stdout,
one readable line on stderr when something fails, the files on disk, and what the model
endpoint was sent.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.cli.conftest import closed_port
from tests.support.openai_server import ErrorReply, Reply

USAGE_PREFIX = "📊 Token:"  # the summary line every turn ends with, failed or not
CONTEXT_OVERFLOW = {"error": {"code": "context_length_exceeded", "type": "invalid_request_error",
                              "message": "This model's maximum context length is 8192 tokens."}}
# openai ignores Retry-After: 0 and backs off ~0.5 s; retry-after-ms makes the retry immediate.
RETRY_NOW = {"Retry-After": "0", "retry-after-ms": "1"}


def call(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    return {"name": name, "arguments": arguments, **({"id": call_id} if call_id else {})}


def tool_results(request: dict) -> list[dict]:
    """The tool messages that answer the last assistant message of a request."""
    messages = request["messages"]
    last_ai = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return [m for m in messages[last_ai + 1:] if m["role"] == "tool"]


def problem_lines(stderr: str) -> list[str]:
    """stderr without the usage summary: what a person reads to learn what went wrong."""
    assert "Traceback" not in stderr
    assert "\x1b[" not in stderr  # stderr is a pipe here: no colour codes
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(USAGE_PREFIX)]


# --- a turn with tools -----------------------------------------------------------------

def test_model_reads_then_edits_a_file_and_the_answer_is_printed(server, run_paicli, project):
    (project / "greet.py").write_text('print("hello world")\n', encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[call("read_file", {"path": "greet.py"})]),
        Reply("", tool_calls=[call("edit_file", {"path": "greet.py", "old_text": "world",
                                                 "new_text": "paicli"})]),
        Reply("Changed the greeting to paicli."),
    ]
    done = run_paicli("-p", "greet paicli instead of the world")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Changed the greeting to paicli.\n"
    assert (project / "greet.py").read_text(encoding="utf-8") == 'print("hello paicli")\n'
    server.assert_consumed()
    first, second, third = server.requests
    assert tool_results(second) == [{
        "role": "tool", "tool_call_id": "call_1_0",
        "content": '<tool_result tool="read_file" trust="untrusted-data">\n'
                   '文件内容:\nprint("hello world")\n\n</tool_result>'}]
    assert tool_results(third)[0]["content"].startswith('<tool_result tool="edit_file" trust="untrusted-data">')


def test_request_carries_system_prompt_sorted_tools_usage_and_key(server, run_paicli):
    server.script = [Reply("hi")]
    done = run_paicli("-p", "say hi")
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    system, user = request["messages"]
    assert system["role"] == "system" and "## Language" in system["content"]
    assert user == {"role": "user", "content": "say hi"}
    names = [t["function"]["name"] for t in request["tools"]]
    assert names == sorted(names) and {"read_file", "edit_file", "execute_command"} <= set(names)
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert request["model"] == "m"
    assert request.headers["authorization"] == "Bearer test-key"


def test_yes_runs_the_command_and_sends_back_its_exit_code(server, run_paicli, project):
    server.script = [
        Reply("", tool_calls=[call("execute_command", {"command": "echo hi > out.txt"})]),
        Reply("Wrote out.txt."),
    ]
    done = run_paicli("-p", "write hi to out.txt", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Wrote out.txt.\n"
    assert (project / "out.txt").read_text(encoding="utf-8") == "hi\n"
    (result,) = tool_results(server.requests[1])
    assert result["content"].startswith('<tool_result tool="execute_command" trust="untrusted-data">\n'
                                        "命令执行完成 (exit code: 0)")


def test_without_yes_and_without_a_terminal_the_command_is_refused_by_name_and_the_run_exits_1(
        server, run_paicli, project):
    server.script = [
        Reply("", tool_calls=[call("execute_command", {"command": "echo hi > out.txt"})]),
        Reply("The command was rejected."),
    ]
    # PAICLI_HITL=on: the person is asked (the default level's reviewer: test_auto_review_e2e.py)
    done = run_paicli("-p", "write hi to out.txt", "--session", "s-no-tty", env={"PAICLI_HITL": "on"},
                      stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr
    assert done.stdout == "The command was rejected.\n"
    assert not (project / "out.txt").exists()
    (result,) = tool_results(server.requests[1])
    assert "[HITL] 操作已被拒绝：没有终端可以询问审批（-p 未加 --yes）" in result["content"]
    lines = problem_lines(done.stderr)
    assert "🚫 无法询问审批，已拒绝: execute_command echo hi > out.txt" in lines
    assert lines[-1].startswith("⚠️ 1 个审批请求无法询问，已拒绝（会话 s-no-tty）。用 --yes 放行全部审批")


def test_malformed_tool_arguments_get_an_error_result_and_the_turn_goes_on(server, run_paicli):
    server.script = [
        Reply("", tool_calls=[call("read_file", '{"path": a.txt}')]),
        Reply("Sorry, retrying is not needed."),
    ]
    done = run_paicli("-p", "read a.txt")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Sorry, retrying is not needed.\n"
    (result,) = tool_results(server.requests[1])
    assert result["tool_call_id"] == "call_1_0"
    assert "工具执行失败: 参数不是合法的 JSON" in result["content"]
    server.assert_consumed()


def test_paths_outside_the_project_are_refused(server, run_paicli, project):
    (project.parent / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[call("read_file", {"path": "../secret.txt"}),
                              call("read_file", {"path": "/etc/passwd"})]),
        Reply("I cannot read those."),
    ]
    done = run_paicli("-p", "read the secrets")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "I cannot read those.\n"
    results = tool_results(server.requests[1])
    assert len(results) == 2
    for result in results:
        assert "🛡️ 策略拒绝: 路径越界" in result["content"]
    assert "TOP SECRET" not in str(server.requests[1]["messages"])
    assert "root:" not in str(server.requests[1]["messages"])


def test_parallel_reads_come_back_in_call_order(server, run_paicli, project):
    (project / "a.txt").write_text("alpha\n", encoding="utf-8")
    (project / "b.txt").write_text("beta\n", encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[call("read_file", {"path": "b.txt"}, "first"),
                              call("read_file", {"path": "a.txt"}, "second")]),
        Reply("b says beta, a says alpha."),
    ]
    done = run_paicli("-p", "read both")
    assert done.returncode == 0, done.stderr
    results = tool_results(server.requests[1])
    assert [r["tool_call_id"] for r in results] == ["first", "second"]
    assert "beta" in results[0]["content"] and "alpha" in results[1]["content"]


# --- settings the user must fix ---------------------------------------------------------

def test_missing_key_exits_2_naming_the_variable_without_calling_the_model(server, run_paicli):
    done = run_paicli("-p", "hello", env={"PAICLI_API_KEY": None})
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = problem_lines(done.stderr)
    assert "PAICLI_API_KEY" in line
    assert server.requests == []


@pytest.mark.process
def test_help_lists_the_flags():
    done = subprocess.run([sys.executable, "-m", "paicli", "--help"], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0
    for flag in ("--session", "--project", "--yes", "--mode"):
        assert flag in done.stdout


def test_project_flag_points_the_tools_at_another_directory(server, run_paicli, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "note.txt").write_text("from the other project\n", encoding="utf-8")
    server.script = [Reply("", tool_calls=[call("read_file", {"path": "note.txt"})]), Reply("ok")]
    done = run_paicli("-p", "read note.txt", "--project", str(other))
    assert done.returncode == 0, done.stderr
    assert "from the other project" in tool_results(server.requests[1])[0]["content"]


# --- slash commands ---------------------------------------------------------------------

def test_slash_help_lists_the_commands(server, run_paicli):
    done = run_paicli("-p", "/help")
    assert done.returncode == 0
    assert all(name in done.stdout for name in ("/help", "/model", "/exit"))
    assert server.requests == []


def test_slash_model_shows_the_model(server, run_paicli):
    done = run_paicli("-p", "/model")
    assert done.returncode == 0
    assert "当前模型: m" in done.stdout
    assert server.base_url in done.stdout
    assert server.requests == []


def test_unknown_slash_command_is_named(server, run_paicli):
    done = run_paicli("-p", "/nonsense")
    assert done.returncode == 1
    assert "❌ 未知命令: /nonsense" in done.stderr
    assert server.requests == []


# --- provider failures ------------------------------------------------------------------

def test_unreachable_endpoint_exits_1_naming_the_base_url(run_paicli):
    started = time.monotonic()
    done = run_paicli("-p", "hello", base_url=f"http://127.0.0.1:{closed_port()}/v1")
    assert time.monotonic() - started < 15  # three retries with backoff, not a hang
    assert done.returncode == 1
    assert done.stdout == ""
    *retries, line = problem_lines(done.stderr)
    assert [r.split("（")[0] for r in retries] == ["⟳ 第 1 次重试", "⟳ 第 2 次重试", "⟳ 第 3 次重试"]  # issue 41
    assert all("（连接失败或超时，等待 " in r for r in retries)
    assert "无法连接" in line and "已重试 3 次" in line and "PAICLI_BASE_URL" in line


def test_unauthorized_exits_1_after_one_request(server, run_paicli):
    server.script = [ErrorReply(401, {"error": {"message": "Incorrect API key provided",
                                                "type": "invalid_request_error", "code": "invalid_api_key"}})]
    done = run_paicli("-p", "hello")
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = problem_lines(done.stderr)
    assert "401" in line and "PAICLI_API_KEY" in line
    assert len(server.requests) == 1


def test_rate_limit_is_retried_and_the_answer_printed(server, run_paicli):
    server.script = [ErrorReply(429, {"error": {"message": "slow down", "type": "rate_limit_error"}}, RETRY_NOW),
                     Reply("after the wait")]
    done = run_paicli("-p", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "after the wait\n"
    assert len(server.requests) == 2
    server.assert_consumed()


def test_server_error_is_retried(server, run_paicli):
    server.script = [ErrorReply(500, {"error": {"message": "boom", "type": "server_error"}}),
                     Reply("recovered")]
    done = run_paicli("-p", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "recovered\n"
    assert len(server.requests) == 2


def test_context_overflow_ends_the_turn_with_one_request(server, run_paicli):
    # The compaction issue will add a retry after compacting; until then the turn fails.
    server.script = [ErrorReply(400, CONTEXT_OVERFLOW)]
    done = run_paicli("-p", "hello")
    assert done.returncode == 1
    assert done.stdout == ""
    hint, line = problem_lines(done.stderr)
    assert line.startswith("❌ 调用 LLM 失败") and "maximum context length" in line
    # issue 41: a request far under the configured 128k overflowed: the real window is smaller
    assert hint.startswith("⚠️ 模型报告上下文超限，而这次请求估计只有约 ") and "小于配置的窗口 128000" in hint
    assert line.endswith("请把 PAICLI_CONTEXT_WINDOW 设为它的真实大小")
    assert len(server.requests) == 1
