"""MCP completed (issue 39) against a real MCP server from npm (server-everything): ``/mcp prompts
<server> <name> [args]`` fetches a prompt into the input, resource templates are listed, resource
links keep their URI and name, and the system prompt carries the resource index, the same on
every turn."""

from __future__ import annotations

import json

import pytest

from tests.support.mcp_everything import everything
from tests.support.openai_server import Reply
from tests.support.pty_terminal import ask


WAIT = {"PAICLI_MCP_STARTUP_WAIT_SECONDS": "60"}  # node starts slowly on a busy machine


@pytest.fixture
def mcp_json(paicli_home):
    program = everything()
    (paicli_home / "mcp.json").write_text(json.dumps({"mcpServers": {"ev": {"command": program, "args": ["stdio"]}}}),
                                          encoding="utf-8")


def test_a_prompt_with_arguments_is_fetched_and_printed_by_p(run_paicli, server, mcp_json):
    done = run_paicli("-p", "/mcp prompts ev args-prompt city=杭州", env=WAIT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "What's weather in 杭州?"
    positional = run_paicli("-p", "/mcp prompts ev args-prompt 上海 浙江", env=WAIT, timeout=60)
    assert positional.stdout.strip() == "What's weather in 上海, 浙江?"
    assert server.requests == []  # a prompt is fetched from the MCP server, never the model


def test_a_prompt_missing_a_required_argument_names_it(run_paicli, mcp_json):
    done = run_paicli("-p", "/mcp prompts ev", env=WAIT, timeout=60)
    assert done.returncode == 0  # the server's prompts, with their arguments
    assert "args-prompt(city, state?)" in done.stdout
    simple = run_paicli("-p", "/mcp prompts ev simple-prompt", env=WAIT, timeout=60)
    assert simple.stdout.strip() == "This is a simple prompt without arguments."
    missing = run_paicli("-p", "/mcp prompts ev args-prompt state=浙江", env=WAIT, timeout=60)
    assert missing.returncode == 1 and "缺少参数 city" in missing.stderr
    unknown = run_paicli("-p", "/mcp prompts ev nosuch x=1", env=WAIT, timeout=60)
    assert unknown.returncode == 1 and "没有提示词 nosuch" in unknown.stderr


def test_resource_templates_are_listed(run_paicli, mcp_json):
    done = run_paicli("-p", "/mcp resources ev", env=WAIT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "🧩 MCP server ev 的资源模板" in done.stdout
    assert "demo://resource/dynamic/text/{resourceId}  Dynamic Text Resource" in done.stdout


def test_resource_links_keep_uri_and_name_and_the_index_is_in_a_stable_system_prompt(run_paicli, server, mcp_json):
    server.script = [Reply("", tool_calls=[{"name": "mcp__ev__get-resource-links", "arguments": {"count": 2}}]),
                     Reply("两个链接"), Reply("第二轮")]
    done = run_paicli("-p", "列出资源链接", "--yes", "--session", "ev1", env=WAIT, timeout=90)
    assert done.returncode == 0, done.stderr
    result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert "[MCP 资源链接] Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain)：Resource 1" in result
    assert "[MCP 资源链接] Text Resource 2 <demo://resource/dynamic/text/2>" in result
    system = server.requests[0]["messages"][0]["content"]
    index = system[system.index("### MCP Resources"):]
    assert "- ev: `demo://resource/static/document/architecture.md`" in index
    assert system.index("## Project Context") < system.index("### MCP Resources")
    assert run_paicli("-p", "再来一轮", "--yes", "--session", "ev1", env=WAIT, timeout=90).returncode == 0
    assert server.requests[2]["messages"][0]["content"] == system  # the same prompt: the prefix cache holds


def test_a_small_window_has_no_index(run_paicli, server, mcp_json):
    server.script = [Reply("好")]
    run_paicli("-p", "你好", env={**WAIT, "PAICLI_CONTEXT_WINDOW": "16000"}, timeout=90)
    assert "### MCP Resources" not in server.requests[0]["messages"][0]["content"]


@pytest.mark.process
def test_in_the_repl_a_fetched_prompt_lands_in_the_input_and_is_sent_as_typed(start_repl, server, mcp_json):
    server.script = [Reply("晴")]
    terminal = start_repl(PAICLI_MCP_STARTUP_WAIT_SECONDS="60")
    ask(terminal, "/mcp prompts ev args-prompt city=杭州")
    terminal.expect("📝 已把 MCP 提示词放入输入框", timeout=60)
    terminal.expect("❯ What's weather in 杭州?")
    terminal.type("\r")
    terminal.expect("晴", timeout=60)
    users = [m["content"] for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert users == ["What's weather in 杭州?"]
