"""``/model list|info|refresh|add``, ``/model <provider>/<model>`` and ``/config provider`` through
``paicli -p`` against the fake server (issue 39), and a switch's effect on the session."""

import json

import pytest

from paicli.app import App
from paicli.commands import dispatch as commands
from paicli.run.result import Usage
from tests.support.openai_server import Reply


def config_json(paicli_home, data):
    (paicli_home / "config.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_model_list_shows_the_catalog_and_what_the_endpoint_reports(server, run_paicli):
    server.models = ["m", "glm-5.1", "brand-new\x1b[31m"]
    done = run_paicli("-p", "/model list")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "deepseek · DeepSeek · DEEPSEEK_API_KEY（未设置 key）" in out
    assert "deepseek-v4-flash" in out and "1M · 推理" in out
    assert f"端点 {server.base_url} 报告的模型（3 个）" in out
    assert "   glm-5.1\n" in out  # known to the catalog
    assert "brand-new␛[31m（目录中没有：按默认窗口 128K）" in out  # a stranger's id, made visible
    assert server.model_requests[0]["authorization"] == "Bearer test-key"
    assert server.requests == []


def test_model_refresh_asks_the_endpoint_again_and_a_dead_endpoint_is_one_line(server, run_paicli):
    assert run_paicli("-p", "/model refresh").returncode == 0 and len(server.model_requests) == 1
    gone = run_paicli("-p", "/model refresh", base_url="http://127.0.0.1:9/v1")
    assert gone.returncode == 0 and "⚠️ 无法从 http://127.0.0.1:9/v1/models 读取模型列表" in gone.stdout


def test_model_info_says_an_unknown_model_has_the_default_window(run_paicli):
    done = run_paicli("-p", "/model info")
    assert "上下文窗口: 128,000 tokens（默认值）" in done.stdout
    assert "压缩阈值: 74% (95000 tokens)" in done.stdout


def test_model_add_registers_a_window_that_counts_from_then_on(run_paicli, paicli_home):
    config_json(paicli_home, {"status_bar": "off"})
    added = run_paicli("-p", "/model add m --window 256000 --vision --price 1/2")
    assert added.returncode == 0, added.stderr
    saved = json.loads((paicli_home / "config.json").read_text(encoding="utf-8"))
    assert saved["status_bar"] == "off"  # the rest of the file stays
    assert saved["providers"]["custom"]["models"]["m"] == {"window": 256000, "vision": True,
                                                            "price": {"input": 1.0, "output": 2.0}}
    info = run_paicli("-p", "/model info")
    assert "上下文窗口: 256,000 tokens   " in info.stdout and "图片输入: 支持" in info.stdout
    assert "输入 1 / 输出 2 元每百万 tokens" in info.stdout
    bad = run_paicli("-p", "/model add m --window lots")
    assert bad.returncode == 1 and bad.stderr.startswith("❌ 用法: /model add")


def test_a_switch_to_a_provider_without_a_key_fails_and_names_the_variable(run_paicli):
    done = run_paicli("-p", "/model kimi/kimi-k2.6")
    assert done.returncode == 1 and "MOONSHOT_API_KEY" in done.stderr


def test_config_provider_lists_and_sets_the_default_provider(run_paicli, paicli_home, server):
    listed = run_paicli("-p", "/config provider", env={"DEEPSEEK_API_KEY": "ds"})
    assert "deepseek" in listed.stdout and "DEEPSEEK_API_KEY: 已设置" in listed.stdout
    assert "STEP_API_KEY: 未设置" in listed.stdout
    config_json(paicli_home, {"providers": {"deepseek": {"base_url": server.base_url}}})
    chosen = run_paicli("-p", "/config provider deepseek", env={"DEEPSEEK_API_KEY": "ds"})
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads((paicli_home / "config.json").read_text(encoding="utf-8"))["provider"] == "deepseek"
    server.script = [Reply("来自 DeepSeek")]
    answered = run_paicli("-p", "你好", env={"DEEPSEEK_API_KEY": "ds", "PAICLI_BASE_URL": None, "PAICLI_MODEL": None,
                                            "PAICLI_API_KEY": None})
    assert answered.stdout.strip() == "来自 DeepSeek"
    assert server.requests[0]["model"] == "deepseek-chat"
    assert server.requests[0].headers["authorization"] == "Bearer ds"
    unknown = run_paicli("-p", "/config provider nope")
    assert unknown.returncode == 1 and "未知的服务商: nope" in unknown.stderr


class Args:
    mode, session, project, yes = "react", None, None, False


async def test_a_live_switch_moves_the_thresholds_light_model_and_drops_session_memory(tmp_path, monkeypatch, server):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAICLI_API_KEY", "k")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds")
    monkeypatch.setenv("PAICLI_MEMORY_SEARCH_TERMS_ENABLED", "false")
    monkeypatch.chdir(tmp_path)
    said, app = [], App(Args())
    session = app.session
    before = await session.context_usage()
    assert (before.window, before.summary_trigger) == (200_000, 167_000)
    from paicli.memory.context.session_memory import _State

    session.compaction.compactor.session_memory._states["x"] = _State(summary="旧模型写的摘要")
    session.usage = Usage(calls=3)
    out = commands.Output(said.append, said.append)
    await commands.handle("/model deepseek/deepseek-v4-flash", app, out)
    assert said[-1].startswith("✅ 已切换模型: deepseek-v4-flash (deepseek)   上下文窗口: 1,000,000")
    after = await session.context_usage()
    assert (after.window, after.summary_trigger, after.clearing_trigger) == (1_000_000, 967_000, 100_000)
    assert after.prompt_cache == "automatic-prefix-cache" and after.provider == "deepseek"
    assert session.deps.model.model_name == "deepseek-v4-flash" and session.deps.light_model is None
    assert session.deps.model.openai_api_key.get_secret_value() == "ds"
    assert session.compaction.compactor.session_memory._states == {} and session.usage == Usage()
    assert session.context.context_window == 1_000_000


@pytest.mark.process
def test_in_the_repl_a_switch_to_a_1m_model_moves_context_s_thresholds_to_the_1m_row(start_repl):
    from tests.support.pty_terminal import ask

    terminal = start_repl(DEEPSEEK_API_KEY="ds-key")
    ask(terminal, "/context")
    terminal.expect("压缩阈值: 95.0k (74%)")  # the default row: "m" is not in the catalog
    ask(terminal, "/model deepseek/deepseek-v4-flash")
    terminal.expect("✅ 已切换模型: deepseek-v4-flash (deepseek)   上下文窗口: 1,000,000 tokens")
    ask(terminal, "/context")
    terminal.expect("deepseek-v4-flash (deepseek)   窗口: 1.0M")
    terminal.expect("压缩阈值: 967.0k (96%)")
    terminal.expect("旧工具结果清理: 100.0k 触发")
