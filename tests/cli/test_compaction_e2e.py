"""Compaction end to end: real HTTP, real files, a 32K window, a session over many processes."""

from __future__ import annotations

from paicli.memory.context.profile import ContextProfile
from paicli.memory.context.summary import HEADINGS
from paicli.memory.tokens import estimate_messages
from tests.cli.conftest import as_langchain
from tests.support.openai_server import ErrorReply, Reply

WINDOW = 32_000
SUMMARY = "\n".join(f"{h}\n- 记录 {i}" for i, h in enumerate(HEADINGS))
TURNS, CALLS_PER_TURN = 12, 3


def request_tokens(body: dict) -> int:
    """The request as the compaction trigger counts it (Q1): messages, system prompt, tool schemas."""
    system, *messages = as_langchain(body["messages"])
    return estimate_messages(messages, tools_schema=body.get("tools"), system=system.content)


def scripted_agent(body: dict) -> Reply:
    """Summary requests (no tools) get a valid summary; agent requests read three files per
    turn, then answer at length (the answers are what only a summary can shrink)."""
    if not body.get("tools"):
        return Reply(SUMMARY)
    messages = body["messages"]
    since_user = len(messages) - max(i for i, m in enumerate(messages) if m["role"] == "user") - 1
    calls = since_user // 2
    if calls < CALLS_PER_TURN:
        return Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": f"data{calls}.txt"}}])
    return Reply("本轮结论：" + "结论细节 " * 600)


def test_a_dozen_turns_stay_under_the_summary_trigger(project, run_paicli, server):
    for i in range(CALLS_PER_TURN):
        (project / f"data{i}.txt").write_text(f"data file {i}\n" + "x" * 6000)
    server.script = [scripted_agent] * 200
    env = {"PAICLI_CONTEXT_WINDOW": str(WINDOW)}
    notices = ""
    for turn in range(TURNS):
        done = run_paicli("-p", f"第 {turn} 轮：读三个数据文件并总结", "--session", "long", env=env)
        assert done.returncode == 0, done.stderr
        notices += done.stderr
    trigger = ContextProfile.from_window(WINDOW).compression_trigger_tokens
    agent_requests = [r for r in server.requests if r.get("tools")]
    assert max(request_tokens(r) for r in agent_requests) < trigger
    assert "🧹 上下文增长，已清理" in notices
    assert "📦 上下文接近窗口上限，已通过完整对话摘要压缩后继续。" in notices
    assert notices.index("🧹 上下文增长") < notices.index("📦 上下文接近窗口上限")
    assert any(HEADINGS[0] in (m.get("content") or "") for m in agent_requests[-1]["messages"])


def test_huge_command_output_is_offloaded_and_read_back(project, run_paicli, server):
    command = "python3 -c \"print('\\n'.join('row %d ' % i + 'y' * 40 for i in range(2500)))\""
    path = ".paicli/tool-outputs/big/001-execute_command.txt"
    server.script = [
        Reply("", tool_calls=[{"name": "execute_command", "arguments": {"command": command}}]),
        Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": path, "offset": 1200, "limit": 3}}]),
        Reply("第 1200 行找到了"),
    ]
    done = run_paicli("-p", "跑一下并看第 1200 行", "--session", "big", "--yes")
    assert done.returncode == 0, done.stderr
    saved = project / path
    assert saved.exists() and len(saved.read_text()) > 100_000
    preview = server.requests[1]["messages"][-1]["content"]
    assert path in preview and "row 0 " in preview and "row 2499 " in preview and len(preview) < 12_000
    ranged = server.requests[2]["messages"][-1]["content"]
    assert "row 1199 " in ranged and "tool-outputs" not in ranged.split("\n", 2)[1]


def test_context_overflow_is_recovered_with_one_retry(project, run_paicli, server):
    overflow = ErrorReply(400, {"error": {"code": "context_length_exceeded", "type": "invalid_request_error",
                                          "message": "This model's maximum context length is 32000 tokens"}})
    server.script = [Reply(f"回答 {i}") for i in range(4)]
    for i in range(4):
        assert run_paicli("-p", f"问题 {i} " + "q" * 2000, "--session", "of").returncode == 0
    server.script += [overflow, Reply(SUMMARY), Reply("压缩后继续回答")]
    done = run_paicli("-p", "再问一次", "--session", "of")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "压缩后继续回答"
    retry = server.requests[-1]
    assert HEADINGS[0] in retry["messages"][1]["content"]
    assert len(server.requests) == 4 + 3  # the failed call, the summary, exactly one retry
    server.assert_consumed()


def test_compact_and_context_commands(project, run_paicli, server):
    server.script = [Reply(f"回答 {i} " + "a" * 1500) for i in range(3)] + [Reply(SUMMARY)]
    for i in range(3):
        assert run_paicli("-p", f"问题 {i}", "--session", "cc").returncode == 0
    context = run_paicli("-p", "/context", "--session", "cc").stdout
    assert "📊 上下文占用" in context and "对话:" in context and "[6 条]" in context
    assert "压缩阈值: 95.0k (74%)" in context  # reference (b): a custom endpoint defaults to a 128K window
    compacted = run_paicli("-p", "/compact", "--session", "cc").stdout
    assert "📦 已手动压缩历史上下文:" in compacted
    after = run_paicli("-p", "/context", "--session", "cc").stdout
    assert "[4 条]" in after  # summary + acknowledgement + the kept round
    assert "📭 当前没有需要压缩的历史上下文" in run_paicli("-p", "/compact", "--session", "empty").stdout
