"""MCP resources end to end through ``paicli -p`` with a real stdio MCP server
(tests/support/mcp_server.py) and the fake OpenAI server: ``/mcp resources``, ``/mcp prompts``
and ``@server:uri`` mentions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.openai_server import Reply

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


def _call(name: str, **args) -> Reply:
    return Reply("", tool_calls=[{"name": name, "arguments": args}])


def _user_contents(request: dict) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"], ensure_ascii=False)
            for m in request["messages"] if m["role"] == "user"]


def test_a_mention_gives_the_model_the_wrapped_resource_and_blocks_memory(run_paicli, server, paicli_home):
    _config(paicli_home / "mcp.json")
    assert run_paicli("-p", "/save --global 默认用中文回答").returncode == 0
    memory_file = paicli_home / "memory" / "long_term_memory.json"
    before = memory_file.read_bytes()
    server.script = [_call("save_memory", fact="部署端口是 8080", scope="global"), Reply("总结完毕。")]
    done = run_paicli("-p", "总结 @srv:file:///x", "--yes", env={"PAICLI_MEMORY_AUTO_EXTRACT_ENABLED": "true"})
    assert done.returncode == 0, done.stderr
    users = _user_contents(server.requests[0])
    assert "总结 @srv:file:///x" in users  # the user's own message is exactly what was typed
    [resource] = [u for u in users if '<resource server="srv"' in u]
    assert '<resource server="srv" uri="file:///x" trust="untrusted-data">\n资源 X 的内容：部署端口是 8080\n</resource>' \
        in resource
    refusal = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "🛡️ 工具调用已拒绝 [MEMORY_EXTERNAL_CONTEXT]" in refusal
    assert memory_file.read_bytes() == before
    assert len(server.requests) == 2  # no fact extraction after a turn that read a resource
    server.assert_consumed()


def test_the_ledger_replays_what_the_model_saw_without_reading_the_resource_again(run_paicli, server, paicli_home):
    _config(paicli_home / "mcp.json")
    server.script = [Reply("总结完毕。"), Reply("还记得。")]
    assert run_paicli("-p", "总结 @srv:file:///x", "--session", "m").returncode == 0
    (paicli_home / "mcp.json").unlink()  # the server is gone: only the ledger can bring it back
    done = run_paicli("-p", "端口是多少？", "--session", "m")
    assert done.returncode == 0, done.stderr
    first, second = server.requests
    # byte for byte after the system prompt, whose MCP resource index (q.2 item 9) left with the server
    assert second["messages"][1:len(first["messages"])] == first["messages"][1:]
    assert "### MCP Resources" in first["messages"][0]["content"]
    assert "### MCP Resources" not in second["messages"][0]["content"]
    assert sum('<resource server="srv"' in u for u in _user_contents(second)) == 1
    server.assert_consumed()


def test_a_mention_that_cannot_be_read_stays_as_typed_with_one_warning(run_paicli, server, paicli_home):
    _config(paicli_home / "mcp.json")
    server.script = [Reply("好的。")]
    done = run_paicli("-p", "看看 @srv:file:///missing 和 @nosuch:file:///x", "--yes")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("⚠️ 未展开")]
    assert len(warnings) == 2 and "@nosuch:file:///x" in warnings[1] and "未找到 MCP server" in warnings[1]
    assert "看看 @srv:file:///missing 和 @nosuch:file:///x" in _user_contents(server.requests[0])
    assert not any("<resource" in u for u in _user_contents(server.requests[0]))
    server.assert_consumed()


def test_the_model_reads_a_resource_with_the_virtual_tool_and_memory_is_then_blocked(run_paicli, server, paicli_home):
    _config(paicli_home / "mcp.json")
    server.script = [_call("mcp__srv__read_resource", uri="file:///x"),
                     _call("save_memory", fact="部署端口是 8080", scope="global"), Reply("读完了。")]
    done = run_paicli("-p", "看看 srv 有什么资源", "--yes")
    assert done.returncode == 0, done.stderr
    tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"mcp__srv__list_resources", "mcp__srv__read_resource"} <= tools
    results = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert 'tool="mcp__srv__read_resource" trust="untrusted-data"' in results[0] and "部署端口是 8080" in results[0]
    assert "🛡️ 工具调用已拒绝 [MEMORY_EXTERNAL_CONTEXT]" in results[1]
    server.assert_consumed()
