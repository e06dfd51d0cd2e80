"""`paicli -p` end to end: a hostile search pattern or file cannot hang or flood a turn."""

from __future__ import annotations

import time

from tests.cli.conftest import run_timeout
from tests.cli.test_oneshot import call, tool_results
from tests.support.openai_server import Reply


def test_catastrophic_grep_pattern_finishes_and_the_model_gets_an_answer(server, run_paicli, project):
    (project / "evil.txt").write_text(("a" * 40 + "b\n") * 100, encoding="utf-8")
    (project / "ok.py").write_text("aaa\n", encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[call("grep_code", {"pattern": "(a+)+$", "regex": True})]),
        Reply("Searched."),
    ]
    started = time.monotonic()
    done = run_paicli("-p", "find lines made of a's")
    assert time.monotonic() - started < run_timeout()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Searched.\n"
    server.assert_consumed()
    (result,) = tool_results(server.requests[1])
    assert "匹配结果 1 条 (engine=ripgrep):\n1. ok.py:1\n" in result["content"]


def test_read_file_of_a_binary_file_tells_the_model_its_type_not_its_bytes(server, run_paicli, project):
    (project / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 1000 + bytes(range(256)))
    server.script = [Reply("", tool_calls=[call("read_file", {"path": "logo.png"})]), Reply("It is an image.")]
    done = run_paicli("-p", "what is logo.png?")
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    (result,) = tool_results(server.requests[1])
    assert "二进制文件" in result["content"] and "image/png" in result["content"] and "1264 字节" in result["content"]
    assert "PNG" not in result["content"].replace("image/png", "") and "\x00" not in result["content"]
