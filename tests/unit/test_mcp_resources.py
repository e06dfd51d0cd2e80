"""MCP resources and prompts against a real stdio server (tests/support/mcp_server.py):
``/mcp resources`` and ``/mcp prompts`` through ``commands.handle``, and reading a resource."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from paicli.commands import dispatch as commands
from paicli.tools.mcp.config import McpSetup, parse_entry
from paicli.tools.mcp.requests import Unavailable
from paicli.tools.mcp.resources import list_prompts, list_resources, read_resource
from paicli.tools.mcp.servers import McpServers

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def _servers(tmp_path: Path, **named: list[str]) -> McpServers:
    configs = tuple(parse_entry(name, {"command": sys.executable, "args": [SERVER, *args]}, "user")
                    for name, args in named.items())
    return McpServers(McpSetup(servers=configs, call_timeout=10, startup_wait=20, state_dir=tmp_path / "mcp"),
                      tmp_path)


class _App:
    def __init__(self, servers: McpServers):
        self.mcp = servers
        self.settings = type("S", (), {"mcp": servers.setup, "home": Path("/nonexistent"),
                                       "project_root": servers.root})()


async def _run(text: str, servers: McpServers) -> tuple[list[str], list[str], bool]:
    said, failed = [], []
    out = commands.Output(said.append, failed.append)
    outcome = await commands.handle(text, _App(servers), out)
    return said, failed, outcome.failed


async def test_resources_and_prompts_are_listed_with_their_details(tmp_path):
    servers = _servers(tmp_path, demo=[])
    try:
        said, failed, bad = await _run("/mcp resources demo", servers)  # starts the servers, as -p does
        assert not bad and not failed
        text = "\n".join(said)
        assert "📚 MCP server demo 的资源（3 个）：" in said
        assert "file:///x  x.txt  (text/plain)" in text and "资源 X 的说明" in text
        said, failed, bad = await _run("/mcp prompts", servers)
        assert not bad
        assert "   review(code, style?)" in said and "Review a piece of code." in "\n".join(said)
    finally:
        servers.close()


async def test_a_servers_hostile_text_cannot_reach_the_terminal_or_forge_lines(tmp_path):
    servers = _servers(tmp_path, demo=[])
    try:
        said, _, _ = await _run("/mcp resources demo", servers)
        evil = [line for line in said if "evil" in line or "fake line" in line]
        assert all("\x1b" not in line and "\x07" not in line for line in said)
        assert len(evil) == 2 and "line one fake line" in evil[1]  # the newline was folded, not obeyed
        assert "␛" in evil[0] and "␛]52" in evil[1]
    finally:
        servers.close()


async def test_a_server_without_the_capability_or_not_running_says_why(tmp_path):
    servers = _servers(tmp_path, bare=["--no-resources"], demo=[])
    try:
        said, failed, bad = await _run("/mcp prompts bare", servers)
        assert bad and failed == ["⚠️ MCP server bare 不支持 prompts"]
        servers.disable("demo")
        said, failed, bad = await _run("/mcp resources", servers)
        assert not bad  # the full listing reports each server on its own line
        assert "⚠️ MCP server bare 不支持 resources" in said
        assert any(line.startswith("⚠️ MCP server demo 当前不可用（disabled") for line in said)
        said, failed, bad = await _run("/mcp resources nosuch", servers)
        assert bad and failed[0].startswith("❌ 未找到 MCP server: nosuch")
    finally:
        servers.close()


async def test_read_resource_returns_text_and_a_bad_uri_is_unavailable(tmp_path):
    servers = _servers(tmp_path, demo=[])
    servers.start()
    await servers.wait_started()
    try:
        assert await read_resource(servers, "demo", "file:///x") == "资源 X 的内容：部署端口是 8080"
        assert [r.uri for r in await list_resources(servers, "demo")] == ["file:///x", "file:///big", "file:///evil"]
        assert [p.name for p in await list_prompts(servers, "demo")] == ["review"]
        with pytest.raises(Unavailable, match="返回错误"):
            await read_resource(servers, "demo", "file:///missing")
        with pytest.raises(Unavailable, match="未找到 MCP server: other"):
            await read_resource(servers, "other", "file:///x")
    finally:
        servers.close()


async def test_a_server_with_resources_gets_the_two_resource_tools(tmp_path):
    servers = _servers(tmp_path, demo=[], bare=["--no-resources"])
    servers.start()
    await servers.wait_started()
    try:
        specs = servers.specs()
        assert "mcp__demo__list_resources" in specs and "mcp__demo__read_resource" in specs
        assert not any(name.startswith("mcp__bare__") and "resource" in name for name in specs)
        listed = await specs["mcp__demo__list_resources"].fn({}, None)
        assert listed.ok and "- file:///x | x.txt | text/plain | 资源 X 的说明" in listed.splitlines()
        read = await specs["mcp__demo__read_resource"].fn({"uri": "file:///x"}, None)
        assert (str(read), read.ok) == ("资源 X 的内容：部署端口是 8080", True)
        missing = await specs["mcp__demo__read_resource"].fn({"uri": "file:///nope"}, None)
        assert not missing.ok and missing.startswith("MCP 工具调用失败: MCP server demo 返回错误")
        assert not (await specs["mcp__demo__read_resource"].fn({}, None)).ok
        servers.disable("demo")
        assert "mcp__demo__read_resource" not in servers.specs()
    finally:
        servers.close()
