"""McpServers against a real MCP server (tests/support/mcp_server.py, FastMCP) over stdio and
streamable HTTP: tools offered as mcp__<server>__<tool>, called, timed out, crashed, restarted."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paicli.commands import dispatch as commands
from paicli.tools.mcp.config import McpSetup, parse_entry
from paicli.tools.mcp.servers import McpServers
from tests.support.waiting import patience

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def _servers(tmp_path: Path, *entries: tuple[str, dict], call_timeout: float = 10.0) -> McpServers:
    configs = tuple(parse_entry(name, entry, "user") for name, entry in entries)
    return McpServers(McpSetup(servers=configs, call_timeout=call_timeout, startup_wait=20,
                               state_dir=tmp_path / "mcp"), tmp_path)


def _stdio() -> dict:
    return {"command": sys.executable, "args": [SERVER]}


async def _started(servers: McpServers) -> McpServers:
    servers.start()
    await servers.wait_started()
    return servers


async def test_a_stdio_tool_is_offered_under_its_mcp_name_and_called(tmp_path):
    changes: list[list[str]] = []
    servers = _servers(tmp_path, ("demo", _stdio()))
    servers.on_change = lambda specs: changes.append(sorted(specs))
    try:
        await _started(servers)
        spec = servers.specs()["mcp__demo__echo"]
        assert spec.parameters["properties"]["text"]["type"] == "string"
        assert spec.description == "Echo the text back. (MCP server: demo, tool: echo)"
        result = await spec.fn({"text": "hi"}, None)
        assert (str(result), result.ok) == ("echo: hi", True)
        assert changes[-1] == ["mcp__demo__broken", "mcp__demo__crash", "mcp__demo__echo",
                               "mcp__demo__list_resources", "mcp__demo__read_resource",  # it offers resources
                               "mcp__demo__slow"]
        assert servers.status_label() == "MCP 1/1"
        broken = await servers.specs()["mcp__demo__broken"].fn({}, None)
        assert not broken.ok and broken.startswith("MCP 工具返回错误:") and "this tool is broken" in broken
    finally:
        servers.close()


async def test_a_timed_out_call_marks_the_server_unhealthy_and_later_calls_fail_fast_until_restart(tmp_path):
    """Issue 41: after one hung call, every later call used to wait the full timeout too."""
    servers = await _started(_servers(tmp_path, ("demo", _stdio()), call_timeout=1))
    app = _App(servers)
    try:
        started = time.monotonic()
        result = await servers.specs()["mcp__demo__slow"].fn({"seconds": 30}, None)
        assert time.monotonic() - started < 10
        assert not result.ok and result == ("MCP 工具调用失败: demo.slow 超过 1 秒未返回，已放弃本次调用；server demo 已标记为无响应，"
                                            "之后的调用会立即失败，用户可用 /mcp restart demo 重启")
        assert servers.servers["demo"].status == "unhealthy" and servers.status_label() == "MCP 0/1"
        started = time.monotonic()
        later = await servers.specs()["mcp__demo__echo"].fn({"text": "still"}, None)
        assert time.monotonic() - started < 0.5  # at once, with the reason
        assert not later.ok and "当前不可用（unhealthy：slow 超过 1 秒未返回）" in later and "/mcp restart demo" in later
        assert await servers.unreported("s1") == [
            "⚠️ MCP server demo 无响应：slow 超过 1 秒未返回（它的工具暂不可用；/mcp restart demo 重启）"]
        assert await servers.unreported("s1") == []  # told once per session
        lines: list[str] = []
        await commands.handle("/mcp", app, lines.append)
        assert any("无响应" in line for line in lines)
        await commands.handle("/mcp restart demo", app, lines.append)
        await servers.wait_started()
        assert (await servers.specs()["mcp__demo__echo"].fn({"text": "back"}, None)) == "echo: back"
    finally:
        servers.close()


async def test_a_crashed_server_fails_the_call_and_comes_back_with_mcp_restart(tmp_path):
    servers = await _started(_servers(tmp_path, ("demo", _stdio())))
    app = _App(servers)
    try:
        crashed = await servers.specs()["mcp__demo__crash"].fn({}, None)
        assert not crashed.ok and crashed.startswith("MCP 工具调用失败: demo.crash") and "/mcp restart demo" in crashed
        later = await servers.specs()["mcp__demo__echo"].fn({"text": "x"}, None)
        assert not later.ok and "当前不可用（failed" in later
        assert servers.status_label() == "MCP 0/1"
        lines: list[str] = []
        await commands.handle("/mcp logs demo", app, lines.append)
        assert any("crashing on purpose" in line for line in lines)  # the server's stderr, kept

        await commands.handle("/mcp restart demo", app, lines.append)
        await servers.wait_started()
        assert servers.servers["demo"].status == "ready"
        assert await servers.specs()["mcp__demo__echo"].fn({"text": "back"}, None) == "echo: back"
    finally:
        servers.close()


async def test_disable_drops_the_tools_and_enable_brings_them_back(tmp_path):
    servers = await _started(_servers(tmp_path, ("demo", _stdio())))
    app = _App(servers)
    try:
        lines: list[str] = []
        await commands.handle("/mcp disable demo", app, lines.append)
        assert servers.specs() == {} and servers.status_label() == "MCP 0"
        await commands.handle("/mcp enable demo", app, lines.append)
        await servers.wait_started()
        assert "mcp__demo__echo" in servers.specs()
    finally:
        servers.close()


async def test_a_server_that_cannot_start_is_failed_and_the_others_run(tmp_path):
    missing = {"command": str(tmp_path / "no-such-program")}
    servers = await _started(_servers(tmp_path, ("gone", missing), ("demo", _stdio())))
    try:
        assert servers.servers["gone"].status == "failed" and servers.servers["gone"].error
        assert servers.status_label() == "MCP 1/2"
        lines: list[str] = []
        await commands.handle("/mcp", _App(servers), lines.append)
        assert any("gone" in line and "失败" in line for line in lines)
        assert any("demo" in line and "就绪" in line and "4 个工具" in line for line in lines)
    finally:
        servers.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server():
    port = _free_port()
    child = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + patience(20)
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    child.terminate()
    child.wait(10)


async def test_a_streamable_http_tool_is_called(tmp_path, http_server):
    servers = await _started(_servers(tmp_path, ("web", {"type": "http", "url": http_server})))
    try:
        assert servers.servers["web"].status == "ready", servers.servers["web"].error
        assert await servers.specs()["mcp__web__echo"].fn({"text": "over http"}, None) == "echo: over http"
    finally:
        servers.close()


class _App:
    """What /mcp reads of the App: the servers and the settings' paths."""

    def __init__(self, servers: McpServers):
        self.mcp = servers
        self.settings = type("S", (), {"mcp": servers.setup, "home": Path("/nonexistent"),
                                       "project_root": servers.root})()


async def test_servers_start_and_answer_under_langgraph_devs_blocking_call_check(tmp_path):
    """Issue 41: ``langgraph dev`` refuses a blocking call on any event loop of its process (its
    own blockbuster set-up, activated here as the server activates it); the servers' loop used to
    open its log file there, and the server stayed ``starting`` for good, with nothing said."""
    from langgraph_runtime_inmem.queue import _enable_blockbuster

    checks = _enable_blockbuster()
    try:
        servers = await _started(_servers(tmp_path, ("demo", _stdio())))
        try:
            assert servers.servers["demo"].status == "ready", servers.servers["demo"].error
            assert await servers.specs()["mcp__demo__echo"].fn({"text": "hi"}, None) == "echo: hi"
        finally:
            servers.close()
    finally:
        checks.deactivate()
    assert (tmp_path / "mcp" / "logs" / "demo.log").read_text(encoding="utf-8").count("已停止") == 1


async def test_a_missing_command_fails_naming_it_and_says_so_to_the_run(tmp_path):
    servers = await _started(_servers(tmp_path, ("ghost", {"command": "no-such-mcp-server-h41"})))
    try:
        state = servers.servers["ghost"]
        assert state.status == "failed" and "找不到命令 no-such-mcp-server-h41" in state.error
        (line,) = await servers.unreported("s1")
        assert line.startswith("⚠️ MCP server ghost 启动失败或已断开：FileNotFoundError: 找不到命令 no-such-mcp-server-h41")
    finally:
        servers.close()


HANGS = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(300)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:  # a zombie is gone for our purpose
        return stat.read().split(")")[-1].split()[0] != "Z"


async def test_a_server_that_hangs_at_start_up_is_ended_by_close(tmp_path):
    """Issue 41: it never answers initialize; close used to leave its process running."""
    pid_file = tmp_path / "hung.pid"
    servers = _servers(tmp_path, ("hung", {"command": sys.executable, "args": ["-c", HANGS, str(pid_file)]}))
    servers.start()
    deadline = time.monotonic() + patience(30)
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    assert servers.servers["hung"].status == "starting" and _alive(pid)
    await asyncio.to_thread(servers.close)
    deadline = time.monotonic() + patience(10)
    while _alive(pid):
        assert time.monotonic() < deadline, "the hung server outlived close()"
        await asyncio.sleep(0.05)
