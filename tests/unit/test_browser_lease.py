"""Issue 40: the browser lease (units take turns, fairly; released however a unit ends) and the
session's watch of the browser server's page lists."""

from __future__ import annotations

import asyncio

import pytest

from paicli.tools.browser.launch import BrowserOptions
from paicli.tools.browser.lease import BrowserLease
from paicli.tools.browser.session import BrowserSession, ConnectError, find_endpoint
from tests.support.waiting import until


async def unit(lease: BrowserLease, name: str, log: list[str], hold: float = 0.05, fail: bool = False,
               waits: list[str] | None = None) -> None:
    async with lease.scope(name):
        await lease.acquire(lambda holder: (waits if waits is not None else []).append(f"{name}<{holder}"))
        log.append(f"{name}+")
        await lease.acquire()  # a unit holding the lease takes it again at once
        await asyncio.sleep(hold)
        log.append(f"{name}-")
        if fail:
            raise RuntimeError("the unit failed")


async def test_units_take_turns_in_the_order_they_asked():
    lease, log, waits = BrowserLease(), [], []
    first = asyncio.create_task(unit(lease, "a", log, waits=waits))
    await until(lambda: lease.holder == "a", 5, "a's lease")
    rest = [asyncio.create_task(unit(lease, n, log, waits=waits)) for n in ("b", "c")]
    await asyncio.gather(first, *rest)
    assert log == ["a+", "a-", "b+", "b-", "c+", "c-"]
    assert waits == ["b<a", "c<a"]
    assert lease.holder is None


async def test_a_failing_or_cancelled_unit_lets_the_next_one_in():
    lease, log = BrowserLease(), []
    failing = asyncio.create_task(unit(lease, "a", log, hold=0.05, fail=True))
    await until(lambda: lease.holder == "a", 5, "a's lease")
    waiting = asyncio.create_task(unit(lease, "b", log, hold=60))
    third = asyncio.create_task(unit(lease, "c", log))
    with pytest.raises(RuntimeError):
        await failing
    await until(lambda: "b+" in log, 5, "b's turn")
    waiting.cancel()  # Ctrl-C while it holds the lease
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await third
    assert log == ["a+", "a-", "b+", "c+", "c-"]
    assert lease.holder is None


async def test_a_unit_cancelled_while_waiting_leaves_the_queue():
    lease, log = BrowserLease(), []
    queued: list[str] = []
    holder = asyncio.create_task(unit(lease, "a", log, hold=0.1))
    await until(lambda: lease.holder == "a", 5, "a's lease")
    waiting = asyncio.create_task(unit(lease, "b", log, waits=queued))
    await until(lambda: queued, 5, "b waiting")
    waiting.cancel()
    await asyncio.gather(holder, waiting, return_exceptions=True)
    await unit(lease, "c", log)
    assert log == ["a+", "a-", "c+", "c-"]


async def test_outside_a_unit_nothing_waits():
    lease = BrowserLease()
    async with lease.scope("a"):
        await lease.acquire()
        await asyncio.wait_for(lease.acquire(), 0.1)  # the ReAct turn: no scope of its own, no lease
    assert lease.holder is None


LISTING = "## Pages\n1: 用户的邮箱 (https://mail.example.com/) \n2: 新页面 (http://127.0.0.1:9/a) [selected]"


def test_the_session_learns_pages_and_hides_the_users_tabs_in_shared_mode():
    session = BrowserSession(BrowserOptions())
    session.record("mcp__chrome-devtools__new_page", {"url": "x"}, True, LISTING)
    assert [p.owned for p in session.view().pages] == [True, True]  # isolated: every page is the agent's
    session.shared = True
    session._pages = {}
    shown = session.record("mcp__chrome-devtools__new_page", {"url": "http://127.0.0.1:9/a"}, True, LISTING)
    view = session.view()
    assert [p.id for p in view.pages if p.owned] == ["2"] and view.selected == "2"
    assert "用户的邮箱" not in shown and "另有 1 个标签页是用户自己的" in shown and "新页面" in shown
    listed = session.record("mcp__chrome-devtools__list_pages", {}, True, LISTING)
    assert "用户的邮箱" in listed  # the tools that list tabs are offered only when the user asked
    snap = 'uid=1_0 RootWebArea "改名了" url="http://127.0.0.1:9/b"'
    session.record("mcp__chrome-devtools__take_snapshot", {"pageId": 2}, True, snap)
    assert session.view().page("2").title == "改名了"
    assert session.record("x", {}, False, "MCP 工具返回错误: boom") == "MCP 工具返回错误: boom"


def test_connect_needs_the_shared_setting_and_a_reachable_chrome(tmp_path):
    with pytest.raises(ConnectError, match="PAICLI_BROWSER=isolated"):
        asyncio.run(BrowserSession(BrowserOptions(mode="isolated")).connect())
    with pytest.raises(ConnectError, match="DevToolsActivePort"):
        find_endpoint(None, (tmp_path,))
    (tmp_path / "DevToolsActivePort").write_text("41234\n/devtools/browser/abc\n")
    assert find_endpoint(None, (tmp_path,)) == "ws://127.0.0.1:41234/devtools/browser/abc"
    with pytest.raises(ConnectError, match="1024-65535"):
        find_endpoint(80, ())
