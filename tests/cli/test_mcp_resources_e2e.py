"""MCP resources end to end through ``paicli -p`` with a real stdio MCP server
(tests/support/mcp_server.py) and the fake OpenAI server: ``/mcp resources``, ``/mcp prompts``
and ``@server:uri`` mentions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def _config(path: Path, name: str = "srv", *args: str) -> None:
    entry = {"command": sys.executable, "args": [SERVER, *args]}
    path.write_text(json.dumps({"mcpServers": {name: entry}}), encoding="utf-8")


def test_mcp_resources_and_prompts_list_what_the_server_offers(run_paicli, server, paicli_home):
    _config(paicli_home / "mcp.json")
    done = run_paicli("-p", "/mcp resources")
    assert done.returncode == 0, done.stderr
    assert "📚 MCP server srv 的资源（3 个）：" in done.stdout
    assert "file:///x  x.txt  (text/plain)" in done.stdout
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    prompts = run_paicli("-p", "/mcp prompts srv")
    assert prompts.returncode == 0, prompts.stderr
    assert "review(code, style?)" in prompts.stdout
    assert not server.requests  # listing asks the MCP server, never the model


def test_mcp_resources_of_an_unknown_server_fails_with_one_line(run_paicli, server, paicli_home):
    _config(paicli_home / "mcp.json")
    done = run_paicli("-p", "/mcp resources nosuch")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("❌ 未找到 MCP server: nosuch") and "Traceback" not in done.stderr
