"""Issue 41, item 5, end to end against the fake server: retries are said as they wait (a 429's
``Retry-After`` included), the last failure is one line saying what it means and what to do,
transport failures are in Chinese, ``--session`` naming no session says a new one starts, and
``--version`` answers."""

from __future__ import annotations

from tests.cli.test_oneshot import problem_lines
from tests.support.openai_server import ErrorReply, Reply

RATE_LIMITED = {"error": {"message": "rate limited", "type": "rate_limit_exceeded"}}
BROKEN = {"error": {"message": "mock error 500", "type": "server_error"}}
AT_ONCE = {"retry-after-ms": "1"}


def test_a_429_with_retry_after_shows_the_wait_then_the_answer(server, run_paicli):
    server.script = [ErrorReply(429, RATE_LIMITED, {"retry-after": "2"}), Reply("好了")]
    done = run_paicli("-p", "你好")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "好了\n"
    assert problem_lines(done.stderr) == ["⟳ 第 1 次重试（429，等待 2 秒）"]
    server.assert_consumed()


def test_after_the_last_retry_one_line_says_the_status_what_it_means_and_what_to_do(server, run_paicli):
    server.script = [ErrorReply(500, BROKEN, AT_ONCE)] * 4
    done = run_paicli("-p", "你好")
    assert done.returncode == 1 and done.stdout == ""
    *retries, line = problem_lines(done.stderr)
    assert retries == [f"⟳ 第 {n} 次重试（500，等待 0.0 秒）" for n in (1, 2, 3)]
    assert line == ("❌ 调用 LLM 失败: HTTP 500: mock error 500（模型服务内部出错，已重试 3 次；"
                    "这是服务端的问题，请稍后再试，或用 /model 换一个模型）")
    server.assert_consumed()


def test_a_stream_dropped_twice_is_told_in_chinese(server, run_paicli):
    server.script = [Reply("一半的回答" * 20, drop_after=3), Reply("一半的回答" * 20, drop_after=3)]
    done = run_paicli("-p", "你好")
    assert done.returncode == 1 and done.stdout == ""
    notice, line = problem_lines(done.stderr)
    assert notice.startswith("⚠️ 与模型服务的连接在响应完成前中断：服务端在响应发完之前关闭了连接") and "正在重试一次" in notice
    assert line.startswith("❌ 调用 LLM 失败: 与模型服务的连接在响应完成前中断：服务端在响应发完之前关闭了连接（")
    assert "peer closed" not in done.stderr  # httpx's English stays out
    server.assert_consumed()


def test_a_session_id_that_names_no_session_says_a_new_one_starts(server, run_paicli):
    server.script = [Reply("第一次"), Reply("第二次")]
    first = run_paicli("-p", "你好", "--session", "my-typo")
    assert first.returncode == 0, first.stderr
    assert problem_lines(first.stderr) == ["🆕 没有找到会话 my-typo，将以这个 id 新建会话（已有的会话可用 /resume 列出）"]
    again = run_paicli("-p", "你好", "--session", "my-typo")
    assert again.returncode == 0 and problem_lines(again.stderr) == []  # it exists now


def test_version(run_paicli):
    from importlib.metadata import version

    done = run_paicli("--version")
    assert done.returncode == 0 and done.stdout == f"paicli {version('paicli')}\n" and done.stderr == ""
