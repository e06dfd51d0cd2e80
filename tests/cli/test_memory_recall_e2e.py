"""Issue 16 end to end: `/memory search` in other words, with nothing matched, and search terms
proposed by the model after `save_memory`, through `paicli -p` against the fake server."""

from __future__ import annotations

import json

from tests.support.openai_server import Reply

TERMS = {"terms": ["bundler", "打包工具", "gamma-build"]}  # the last: a word only these terms hold


def _ok(run_paicli, *args, **kw) -> str:
    done = run_paicli("-p", *args, **kw)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_search_finds_other_words_and_shows_recent_entries_when_nothing_matches(run_paicli):
    _ok(run_paicli, "/save 移动端用 React Native 开发，iOS 和 Android 共用一套代码")
    _ok(run_paicli, "/save --global 用户是后端工程师，熟悉 Go 和 Java")
    found = _ok(run_paicli, "/memory search 手机端用什么开发").splitlines()
    assert found[0] == "🔎 长期记忆搜索: 手机端用什么开发："
    assert found[2] == "  移动端用 React Native 开发，iOS 和 Android 共用一套代码"
    assert "  用户是后端工程师，熟悉 Go 和 Java" in _ok(run_paicli, "/memory search 我的技术背景").splitlines()

    nothing = _ok(run_paicli, "/memory search 咖啡机").splitlines()
    assert nothing[0] == "📭 没有与“咖啡机”匹配的长期记忆。以下是最近核实的 2 条："
    assert nothing[2] == "  用户是后端工程师，熟悉 Go 和 Java"  # the latest first
    assert nothing[4] == "  移动端用 React Native 开发，iOS 和 Android 共用一套代码"
    _ok(run_paicli, "/memory clear --global --yes")  # the project memory and the global one
    assert _ok(run_paicli, "/memory search 咖啡机") == "📭 没有匹配的长期记忆。"


def test_save_memory_gets_search_terms_from_the_model_after_the_answer(run_paicli, server, paicli_home):
    def reply(request: dict) -> Reply:
        system = request["messages"][0]["content"]
        return Reply(json.dumps(TERMS, ensure_ascii=False)) if "检索词" in system else Reply("记住了。")

    call = Reply("", tool_calls=[{"name": "save_memory", "arguments": {"fact": "前端构建用 Vite 5"}}])
    server.script = [call, reply, reply]  # the answer and the terms call may arrive in either order
    env = {"PAICLI_MEMORY_SEARCH_TERMS_ENABLED": "true"}
    assert _ok(run_paicli, "记住：前端构建用 Vite 5", env=env) == "记住了。"
    [entry] = json.loads((paicli_home / "memory" / "long_term_memory.json").read_text(encoding="utf-8"))
    assert entry["metadata"]["search_terms"] == "bundler | 打包工具 | gamma-build"
    [terms_call] = [r for r in server.requests if "检索词" in r["messages"][0]["content"]]
    assert terms_call["messages"][1]["content"] == "前端构建用 Vite 5" and not terms_call.get("tools")
    assert _ok(run_paicli, "/memory search gamma-build").splitlines()[2] == "  前端构建用 Vite 5"
    server.assert_consumed()
