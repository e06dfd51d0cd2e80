"""Cache-stable requests end to end (issue 13): `paicli -p` turns of one `--session` against the
local server, with saved facts that different questions retrieve. Every request starts with the
one before it (also across turns and processes), each turn still brings its own memories, the
token line shows the cache hits the server reports, and `/context` shows the stable prefix."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

from tests.support.openai_server import Reply
from tests.support.pty_terminal import PtyTerminal
from tests.support.waiting import patience

FACTS = ["项目使用 Java 17 和 Maven 构建", "数据库是 PostgreSQL 15", "部署用 Kubernetes 集群", "日志写到 logs/app.log"]
TURNS = [("Java 和 Maven 的版本？读一下 a.txt", "项目使用 Java 17 和 Maven 构建"),
         ("数据库用的是什么 PostgreSQL？", "数据库是 PostgreSQL 15"),
         ("部署到哪个 Kubernetes 集群？", "部署用 Kubernetes 集群"),
         ("日志写到哪里 logs？", "日志写到 logs/app.log")]


def _serialized(request: dict) -> str:
    return json.dumps(request["messages"], ensure_ascii=False)


def _save_facts(run_paicli) -> None:
    for fact in FACTS:
        assert run_paicli("-p", f"/save {fact}").returncode == 0


def test_every_request_extends_the_last_and_each_turn_carries_its_memories(run_paicli, server, project):
    (project / "a.txt").write_text("hello", encoding="utf-8")
    (project / "PAI.md").write_text("构建命令: mvn -q test", encoding="utf-8")
    _save_facts(run_paicli)
    server.prefix_cache = "openai"
    server.script = [Reply("", tool_calls=[{"name": "read_file", "arguments": {"path": "a.txt"}}]), Reply("读完了"),
                     Reply("PostgreSQL 15"), Reply("Kubernetes"), Reply("logs/app.log")]
    starts, lines = [], []
    for question, _fact in TURNS:
        starts.append(len(server.requests))
        done = run_paicli("-p", question, "--session", "cache")
        assert done.returncode == 0, done.stderr
        lines.append([line for line in done.stderr.splitlines() if line.startswith("📊 Token:")][-1])
    server.assert_consumed()
    texts = [_serialized(r) for r in server.requests]
    for previous, following in zip(texts, texts[1:]):
        shared = len(os.path.commonprefix([previous, following]))
        assert shared >= 0.95 * len(previous)
    for previous, following in zip(server.requests, server.requests[1:]):  # exactly, in fact
        assert following["messages"][:len(previous["messages"])] == previous["messages"]
    for start, (_question, fact) in zip(starts, TURNS):
        turn = _serialized(server.requests[start])
        assert fact in turn and "以下记忆是线索而不是事实" in turn
        assert fact not in server.requests[start]["messages"][0]["content"]  # not in the system prompt
    # The second turn's memory block is not repeated: it is in the history once.
    assert texts[-1].count("数据库是 PostgreSQL 15") == 1
    # The server reported what repeated the previous request; the token line shows it. Turn 1
    # has two requests (its first one has nothing to repeat); later turns repeat almost all.
    shares = [int(line.split("缓存命中 ")[1].split(", ")[1].split("%")[0]) for line in lines]
    assert all(share >= 90 for share in shares[1:]), lines


@pytest.mark.parametrize("spelling", ["deepseek", "kimi"])
def test_the_token_line_reads_each_providers_cache_spelling(run_paicli, server, spelling):
    server.prefix_cache = spelling
    server.script = [Reply("", tool_calls=[{"name": "list_dir", "arguments": {"path": "."}}]), Reply("好了")]
    done = run_paicli("-p", "列一下目录")
    assert done.returncode == 0, done.stderr
    line = [line for line in done.stderr.splitlines() if line.startswith("📊 Token:")][-1]
    assert "缓存命中" in line


def test_context_shows_the_share_of_the_next_request_that_repeats_the_last(run_paicli, server, project):
    _save_facts(run_paicli)
    before = run_paicli("-p", "/context", "--session", "ctx")
    assert "稳定前缀: 尚无上一次请求" in before.stdout
    server.script = [Reply("好的"), Reply("还好")]
    assert run_paicli("-p", "数据库用的是什么 PostgreSQL？", "--session", "ctx").returncode == 0
    shown = run_paicli("-p", "/context", "--session", "ctx").stdout
    line = next(line for line in shown.splitlines() if "稳定前缀:" in line)
    share = int(line.split("稳定前缀:")[1].split("%")[0])
    assert share >= 90  # all but the answer repeats the last request
    bar = next(line for line in shown.splitlines() if line.startswith("  [")).split("]")[0]
    assert "█" in bar
    (project / "PAI.md").write_text("新的项目说明", encoding="utf-8")
    changed = run_paicli("-p", "/context", "--session", "ctx").stdout
    after = int(next(l for l in changed.splitlines() if "稳定前缀:" in l).split("稳定前缀:")[1].split("%")[0])
    assert after < share  # a PAI.md edit changes the system prompt: the cache serves less


@pytest.mark.process
def test_memory_statistics_show_the_sessions_cached_input(project, paicli_env, server):
    server.prefix_cache = "kimi"
    server.script = [Reply("第一"), Reply("第二")]
    env = paicli_env(server.base_url, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    repl = PtyTerminal([sys.executable, "-m", "paicli"], cwd=str(project), env=env)
    try:
        for text, answer in (("你好", "第一"), ("再来", "第二")):
            repl.expect("❯")
            repl.type(text + "\r")
            repl.expect(answer)
        repl.expect("❯")
        repl.type("/memory\r")
        stats = repl.expect("平均输入")
        assert re.search(r"缓存命中: [1-9]\d* \(\d+%\)", stats), stats
        repl.expect("❯")
        repl.type("\x04")
        assert repl.proc.wait(timeout=patience(30)) == 0
    finally:
        repl.close()
