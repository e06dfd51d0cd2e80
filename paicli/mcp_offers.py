"""``/mcp resources [name]`` and ``/mcp prompts [name]`` (reference u.1): what servers offer.

Without a name every configured server is listed, each with its entries or one line saying why
not (not running, untrusted, no such capability). Everything a server wrote (URIs, names,
descriptions) is a stranger's text: ``one_line`` makes control characters visible, folds
newlines so a description cannot forge lines of our own, and cuts it short.
"""

from __future__ import annotations

from typing import Any

from paicli.terminal import visible
from tools.mcp.requests import Unavailable
from tools.mcp.resources import list_prompts, list_resources

MAX_FIELD = 200  # characters of one server-written field on a listing line


def one_line(text: str, limit: int = MAX_FIELD) -> str:
    flat = " ".join(visible(str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def offers(verb: str, name: str, app: Any, say: Any) -> None:
    servers = app.mcp
    if name and name not in servers.servers:
        say.fail(f"❌ 未找到 MCP server: {one_line(name, 40)}（/mcp 查看已配置的 server）")
        return
    if not servers.servers:
        say(f"📭 没有配置 MCP server（用户: {app.settings.home / 'mcp.json'}，项目: "
            f"{app.settings.project_root / '.mcp.json'}）")
        return
    if not any(s.task is not None for s in servers.servers.values()):
        servers.start()  # `paicli -p "/mcp resources"`: start them so there is something to ask
        await servers.wait_started()
    for server in [name] if name else list(servers.servers):
        # one named server that cannot answer fails the command; in the full listing it is a line
        await _one(verb, server, servers, say, say.fail if name else say)


async def _one(verb: str, server: str, servers: Any, say: Any, report: Any) -> None:
    try:
        found = await (list_resources if verb == "resources" else list_prompts)(servers, server)
    except Unavailable as exc:
        report(f"⚠️ {one_line(str(exc), 400)}")
        return
    noun = "资源" if verb == "resources" else "提示词"
    say(f"📚 MCP server {server} 的{noun}（{len(found)} 个）：" if found else f"📭 MCP server {server} 没有提供{noun}")
    for item in found:
        for line in (_resource_lines(item) if verb == "resources" else _prompt_lines(item)):
            say(line)


def _resource_lines(resource: Any) -> list[str]:
    head = f"   {one_line(resource.uri)}  {one_line(resource.name, 80)}"
    if resource.mime_type:
        head += f"  ({one_line(resource.mime_type, 60)})"
    return [head] + ([f"      {one_line(resource.description)}"] if resource.description else [])


def _prompt_lines(prompt: Any) -> list[str]:
    args = ", ".join(f"{one_line(n, 40)}{'' if required else '?'}" for n, required, _ in prompt.arguments)
    lines = [f"   {one_line(prompt.name, 80)}({args})"]
    if prompt.description:
        lines.append(f"      {one_line(prompt.description)}")
    lines += [f"      - {one_line(n, 40)}: {one_line(d)}" for n, _, d in prompt.arguments if d]
    return lines
