"""Issue 41, item 8: MCP where the graphs run. ``paicli studio`` (the real command, a subprocess)
starts the user's MCP servers inside ``langgraph dev``, whose blocking-call check used to stop
them silently; driven with langgraph_sdk as Studio drives it, a run is offered a server's tools,
calls one, and is told about a server that failed. ``kill -9`` of paicli leaves no MCP process."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.cli.test_mcp_lifetime_e2e import alive, gone
from tests.cli.test_studio_command import environment, start_studio
from tests.support.openai_server import FakeOpenAIServer, Reply
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # the Studio server

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def test_a_studio_run_is_offered_mcp_tools_calls_one_and_hears_of_a_failed_server(tmp_path):
    from langgraph_sdk import get_sync_client

    project, home, marker = tmp_path / "project", tmp_path / "home", tmp_path / "demo.pid"
    project.mkdir()
    home.mkdir()
    servers = {"demo": {"command": sys.executable, "args": [SERVER, "--marker", str(marker)]},
               "ghost": {"command": "no-such-mcp-server-h41"}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    fake = FakeOpenAIServer([Reply("", tool_calls=[{"name": "mcp__demo__echo", "arguments": {"text": "你好"}}]),
                             Reply("收到了。")]).start()
    proc, url = start_studio(project, environment(home, fake.base_url), tmp_path / "studio.log")
    try:
        client = get_sync_client(url=url, api_key=None)
        thread = client.threads.create()["thread_id"]
        notices = []
        for part in client.runs.stream(thread, "react", input={"messages": [{"role": "user", "content": "调用 echo"}]},
                                       context={"project_root": str(project), "approval": "yes"},
                                       stream_mode=["custom", "values"]):
            if part.event == "custom" and isinstance(part.data, dict) and part.data.get("notice"):
                notices.append(part.data["notice"])
        assert "mcp__demo__echo" in {t["function"]["name"] for t in fake.requests[0].get("tools") or []}
        results = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
        assert len(results) == 1 and "echo: 你好" in results[0]
        assert client.threads.get_state(thread)["values"]["messages"][-1]["content"] == "收到了。"
        assert any(n.startswith("⚠️ MCP server ghost 启动失败或已断开：FileNotFoundError: 找不到命令 no-such-mcp-server-h41")
                   for n in notices), notices
        demo = int(marker.read_text())
        assert alive(demo)
        os.kill(proc.pid, signal.SIGKILL)  # paicli studio dies; its server and the MCP servers follow
        proc.wait(timeout=patience(10))
        assert gone(demo, 30), "an MCP server outlived paicli studio killed with SIGKILL"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=patience(30))
        fake.stop()
