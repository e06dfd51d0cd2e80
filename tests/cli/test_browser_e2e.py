"""Issue 40 end to end: a real headless Chromium driven by the real chrome-devtools MCP server,
through ``paicli`` against the fake OpenAI server, on pages served on 127.0.0.1.

Every test starts the browser it needs (paicli starts its own; the shared-mode test starts a
second Chromium as the user's), so all are ``process`` tests; without Chromium or the server
they are skipped, and fail under ``CI=true`` (``tests/support/browser.py``).
"""

from __future__ import annotations

import json

import pytest

from tests.cli.test_plan_mode import PLANNING, plan_reply
from tests.support.browser import UserChrome, browser_env, chromium_processes
from tests.support.openai_server import ByContent, Hang, Reply
from tests.support.pty_terminal import ask
from tests.support.web_server import FakeWebServer, Page
from paicli.tools.policy.turn import MSG_MEMORY_EXTERNAL, MSG_NOT_ADVERTISED, MSG_UNGROUNDED
from tests.support.waiting import patience

pytestmark = pytest.mark.process

NEW_PAGE, SNAPSHOT, CLICK = ("mcp__chrome-devtools__new_page", "mcp__chrome-devtools__take_snapshot",
                             "mcp__chrome-devtools__click")
NAVIGATE = "mcp__chrome-devtools__navigate_page"
TITLED = "<html><head><meta charset='utf-8'><title>{title}</title></head><body><h1>{heading}</h1>" \
         "<button onclick=\"document.title='clicked'\">提交</button></body></html>"


def page(title: str, heading: str = "内容") -> Page:
    return Page(TITLED.format(title=title, heading=heading))


def call(name: str, **args) -> Reply:
    return Reply("", tool_calls=[{"name": name, "arguments": args}])


def tools_of(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def results_of(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture
def web():
    with FakeWebServer(pages={"/a": page("甲页面标题"), "/b": page("乙页面标题"), "/login": page("账户", "请登录后继续"),
                              "/user": page("用户自己的标签页")}) as fake:
        yield fake


def test_open_a_grounded_page_and_read_its_title_inside_the_boundary(run_paicli, server, web, paicli_home):
    url = web.url("/a")
    server.script = [call(NEW_PAGE, url=url), call(NEW_PAGE, url="http://127.0.0.1:1/elsewhere"),
                     call(CLICK, pageId=2, uid="1_1"), Reply("标题是 甲页面标题")]
    done = run_paicli("-p", f"打开 {url} 看看标题", "--yes", env=browser_env("isolated"), timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "标题是 甲页面标题"
    assert f"🌐 打开 {url}" in done.stderr  # the tool line: action and page
    first, second, third, last = server.requests
    assert NEW_PAGE in tools_of(first) and CLICK not in tools_of(first)
    [opened] = results_of(second)
    assert 'tool="mcp__chrome-devtools__new_page" trust="untrusted-data"' in opened and "甲页面标题" in opened
    assert CLICK not in tools_of(second)  # browser intent NONE: no interaction offered, page open or not
    assert SNAPSHOT in tools_of(second)  # a page is open now: reading it is
    assert MSG_UNGROUNDED in results_of(third)[-1]
    assert MSG_NOT_ADVERTISED in results_of(last)[-1] and "clicked" not in results_of(last)[-1]
    assert web.requests.count("/a") == 1 and not any("elsewhere" in r for r in web.requests)
    assert not list((paicli_home / "browser" / "profiles").glob("*"))  # the throwaway profile went with the process
    assert not chromium_processes(str(paicli_home / "browser" / "profiles"))


def test_a_login_page_offers_connect_and_a_save_after_reading_it_is_refused(run_paicli, server, web):
    url = web.url("/login")
    server.script = [call(NEW_PAGE, url=url), call(SNAPSHOT, pageId=2),
                     call("save_memory", fact="这个站点需要登录"), Reply("页面要求登录。")]
    done = run_paicli("-p", f"打开 {url} 看看内容", "--yes", env=browser_env("shared"), timeout=180)
    assert done.returncode == 0, done.stderr
    opened, read, saved = server.requests[1:]
    assert "browser_connect" not in tools_of(opened)
    assert "请登录后继续" in results_of(read)[-1]
    assert "browser_connect" in tools_of(read)  # the page asked for a login: connecting is offered
    assert MSG_MEMORY_EXTERNAL in results_of(saved)[-1]


def test_two_parallel_plan_tasks_take_turns_with_the_browser(run_paicli, server, web):
    a, b = web.url("/a"), web.url("/b")
    tasks = [{"id": "a", "description": f"打开 {a} 读标题", "type": "ANALYSIS"},
             {"id": "b", "description": f"打开 {b} 读标题", "type": "ANALYSIS"}]
    routes = ByContent({
        PLANNING: [plan_reply(tasks)],
        f"当前任务：打开 {a}": [call(NEW_PAGE, url=a), Hang(1.5, Reply("甲页面标题"))],
        f"当前任务：打开 {b}": [call(NEW_PAGE, url=b), Hang(1.5, Reply("乙页面标题"))],
    })
    server.script = routes.script()
    done = run_paicli("--mode", "plan", "-p", f"分别打开 {a} 和 {b} 读出两个页面的标题", "--yes",
                      env=browser_env("isolated"), timeout=240)
    assert done.returncode == 0, done.stderr
    assert "⚡ 本轮并行执行 2 个任务" in done.stderr
    assert "⏳ 等待浏览器：" in done.stderr  # the second unit waited, and said so
    pages = [r for r in web.requests if r in ("/a", "/b")]
    assert sorted(pages) == ["/a", "/b"]
    first, second = (a, b) if pages[0] == "/a" else (b, a)
    finished_first = [t for key, t in routes.arrivals if key == f"当前任务：打开 {first}"][-1]
    started_second = [t for key, t in routes.arrivals if key == f"当前任务：打开 {second}"][-1]
    assert started_second > finished_first  # the second's page came after the first unit was done
    assert routes.left() == {}


def test_shared_mode_reads_the_users_tabs_but_changes_only_its_own(start_repl, server, web, user_home, paicli_home):
    user = UserChrome(user_home / ".config" / "chromium", web.url("/user"))
    try:
        url = web.url("/b")
        server.script = [call(NEW_PAGE, url=url), call(NAVIGATE, pageId=1, type="url", url=url),
                         call(CLICK, pageId=1, uid="1_2"), Reply("完成")]
        repl = start_repl(**browser_env("shared"), PAICLI_HITL="default")
        ask(repl, f"/browser connect {user.port}")
        repl.expect("确认连接？")
        repl.type("y\r")
        repl.expect("已连接到你的 Chrome", timeout=120)  # the server restarts on the user's Chrome
        ask(repl, "/browser tabs")
        repl.expect("用户自己的标签页", timeout=60)
        ask(repl, f"用浏览器点击提交按钮，页面是 {url}")
        repl.expect("请选择操作", timeout=120)  # new_page is an MCP call: it asks; the refused two are never asked
        repl.type("y\r")
        repl.expect("完成", timeout=120)
        _, opened, navigated, clicked = server.requests[-4:]
        assert "乙页面标题" in results_of(opened)[-1] and "用户自己的标签页" not in results_of(opened)[-1]
        assert "另有 1 个标签页是用户自己的" in results_of(opened)[-1]  # the user's tab: neither title nor URL
        assert "shared 浏览器模式下页面 1" in results_of(navigated)[-1]  # the user's tab is theirs
        assert "不是 paicli 打开的" in results_of(clicked)[-1]
        assert CLICK in tools_of(clicked)  # an interaction was asked for, on the page paicli opened
        ask(repl, "/browser disconnect")
        repl.expect("回到隔离模式", timeout=120)
        ask(repl, "/browser")
        repl.expect("浏览器模式: isolated")
        ask(repl, "/exit")
        repl.proc.wait(timeout=patience(30))
        assert user.proc.poll() is None  # the user's Chrome is theirs: still running
    finally:
        user.close()
    assert not chromium_processes(str(paicli_home / "browser" / "profiles"))
