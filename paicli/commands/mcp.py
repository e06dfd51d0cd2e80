"""``/mcp`` (reference u.1): the servers and their state, and restart, disable, enable, trust, logs;
``resources`` and ``prompts`` are in ``paicli.commands.mcp_offers``.

``app.mcp`` is a ``paicli.tools.mcp.servers.McpServers``. In the REPL the servers were started with
the session; under ``paicli -p "/mcp"`` the listing starts them first (and waits the startup
wait), so the states it prints are real. ``disable`` and ``enable`` last for the process;
``trust`` is kept in ``$PAICLI_HOME/mcp/trust.json`` for exactly the entry as it is now.
"""

from __future__ import annotations

from typing import Any

USAGE = "❌ 用法: /mcp [resources|prompts [name]] [prompts <name> <提示词> [参数=值 …]] [restart|disable|enable|trust|logs <name>]"
STATE_LABELS = {"ready": "就绪", "starting": "启动中", "failed": "失败", "untrusted": "未信任",
                "disabled": "已停用", "unhealthy": "无响应"}  # issue 26: what a person reads is Chinese
VERBS = ("restart", "disable", "enable", "trust", "logs")


async def mcp(app: Any, payload: str, say: Any) -> Any:
    """``/mcp``; a fetched prompt (``/mcp prompts <s> <name>``, issue 39) goes into the REPL's next
    input (``CommandResult.prefill``), or to stdout under ``-p``."""
    from paicli.commands.spec import CommandResult

    prompt = await _mcp(payload, app, say, interactive=say.read_line is not None)
    if not prompt:
        return None
    if say.read_line is None:
        say(prompt)
        return None
    say("📝 已把 MCP 提示词放入输入框：编辑后回车发送，Ctrl-C 放弃")
    return CommandResult(prefill=prompt)


async def _mcp(payload: str, app: Any, say: Any, interactive: bool) -> str | None:
    """None, or the text of a fetched prompt for the user's input (``/mcp prompts <s> <name>``)."""
    verb, _, name = payload.partition(" ")
    verb, name = verb.lower(), name.strip()
    servers = app.mcp
    if not verb:
        await _list(app, servers, say)
        return
    if verb in ("resources", "prompts"):
        from paicli.commands.mcp_offers import offers

        return await offers(verb, name, app, say)
    if verb not in VERBS:
        say.fail(USAGE)
        return
    if name not in servers.servers:
        say.fail(f"❌ 未找到 MCP server: {name or '（未给出名称）'}（/mcp 查看已配置的 server）")
        return
    await _act(verb, name, servers, say, interactive)


async def _act(verb: str, name: str, servers: Any, say: Any, interactive: bool) -> None:
    state = servers.servers[name]
    if verb == "logs":
        lines = servers.logs(name)
        say(f"📜 MCP server {name} 的日志（最近 {len(lines)} 行）：" if lines else f"📭 MCP server {name} 还没有日志")
        for line in lines:
            say(f"   {line}")
    elif verb == "trust":
        servers.trust_server(name, start=interactive)
        say(f"✅ 已信任项目 MCP server {name}: {state.config.describe()}（配置变化后需要重新信任）")
    elif state.status == "untrusted" and verb != "disable":
        say.fail(_untrusted_hint(name))
    elif verb == "disable":
        servers.disable(name)
        say(f"⏸️ 已停用 MCP server {name}（本次运行有效；/mcp enable {name} 恢复）")
    else:  # restart, enable: the server starts in the background
        servers.restart(name) if verb == "restart" else servers.enable(name)
        say(f"🔄 MCP server {name} 正在启动，稍后用 /mcp 查看状态")


async def _list(app: Any, servers: Any, say: Any) -> None:
    setup = app.settings.mcp
    for problem in setup.problems:
        say(problem)
    if not servers.servers:
        say(f"📭 没有配置 MCP server（用户: {app.settings.home / 'mcp.json'}，项目: "
            f"{app.settings.project_root / '.mcp.json'}）")
        return
    if not any(s.task is not None for s in servers.servers.values()):
        servers.start()  # `paicli -p "/mcp"`: start them so the states are real
        await servers.wait_started()
    say(f"🔌 MCP servers（{servers.status_label()}）：")
    for name, state in servers.servers.items():
        say(_row(name, state))
        if state.status == "untrusted":
            say(f"      {_untrusted_hint(name)}")
        elif state.status in ("failed", "unhealthy"):
            say(f"      {state.error}（/mcp restart {name} 重试，/mcp logs {name} 查看日志）")


def _row(name: str, state: Any) -> str:
    source = {"project": "项目 .mcp.json", "paicli": "PAICLI_BROWSER"}.get(state.config.source, "用户配置")
    tools = f"{len(state.tools)} 个工具" if state.status == "ready" else "-"  # the server's own
    return (f"   {_cells(name, 16)} {_cells(STATE_LABELS.get(state.status, state.status), 8)} "
            f"{_cells(tools, 10)} {state.config.transport:<5} {source}  {state.config.describe()}")


def _cells(text: str, width: int) -> str:
    """Left-aligned in ``width`` terminal cells: a Chinese character takes two, so ``:<`` misaligned
    the columns of a ready server (就绪, 4 个工具) and a starting one (启动中, -)."""
    from rich.cells import cell_len

    return text + " " * max(0, width - cell_len(text))


def _untrusted_hint(name: str) -> str:
    return (f"⚠️ {name} 来自项目的 .mcp.json，尚未信任，不会启动；确认上面的命令可信后运行 /mcp trust {name}"
            "（配置变化后需要重新信任）")
