"""Issue 40: ``PAICLI_BROWSER`` and ``/browser`` through ``paicli -p``, without starting a browser:
off, not installed (one line, nothing else changes), a bad value, a project's .env that may not
turn it on, ``connect`` with nobody to type y, and /policy's line."""

from __future__ import annotations

from tests.support.browser import browser_env
from tests.support.openai_server import Reply


def test_off_by_default_says_how_to_turn_it_on(run_paicli):
    done = run_paicli("-p", "/browser")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("🌐 浏览器未开启（PAICLI_BROWSER=off）：设置 PAICLI_BROWSER=isolated 使用无头浏览器，"
                                   "shared 还允许连接你自己的 Chrome")


def test_without_chromium_one_line_at_browser_and_nothing_else_changes(run_paicli, server, tmp_path):
    env = {"PAICLI_BROWSER": "isolated", "PAICLI_BROWSER_EXECUTABLE": str(tmp_path / "no-chromium")}
    done = run_paicli("-p", "/browser", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["🌐 浏览器不可用（PAICLI_BROWSER=isolated）：未找到 Chromium 或 Chrome"
                                        "（安装 chromium，或用 PAICLI_BROWSER_EXECUTABLE 指定浏览器程序）"]
    server.script = [Reply("好的。")]
    turn = run_paicli("-p", "打开 https://example.com 看看", env=env)
    assert turn.returncode == 0 and turn.stdout.strip() == "好的。" and turn.stderr.count("\n") <= 1
    tools = {t["function"]["name"] for t in server.requests[0].get("tools") or []}
    assert not any(name.startswith(("mcp__chrome-devtools__", "browser_")) for name in tools)


def test_a_bad_value_is_a_setting_to_fix(run_paicli):
    done = run_paicli("-p", "/browser", env={"PAICLI_BROWSER": "always"})
    assert done.returncode == 2
    assert "PAICLI_BROWSER 只能是 off、isolated、shared 之一，当前为 'always'" in done.stderr


def test_a_projects_env_cannot_turn_the_browser_on(run_paicli, project):
    (project / ".env").write_text("PAICLI_BROWSER=shared\n", encoding="utf-8")
    assert "PAICLI_BROWSER=off" in run_paicli("-p", "/browser").stdout


def test_connect_needs_a_person_to_type_y(run_paicli):
    done = run_paicli("-p", "/browser connect 9222", env=browser_env("shared"))
    assert done.returncode == 1
    assert "需要在终端中输入 y 确认" in done.stderr
    isolated = run_paicli("-p", "/browser connect", env=browser_env("isolated"))
    assert isolated.returncode == 1 and "不允许连接你自己的 Chrome" in isolated.stderr


def test_policy_shows_the_browser_mode(run_paicli):
    assert "浏览器: off（PAICLI_BROWSER=off，没有浏览器工具）" in run_paicli("-p", "/policy").stdout
    shared = run_paicli("-p", "/policy", env=browser_env("shared")).stdout
    assert "浏览器: shared，当前为隔离模式" in shared and "允许在你输入 y 后连接你的 Chrome" in shared
