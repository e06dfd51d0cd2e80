"""``/mcp resources [name]`` and ``/mcp prompts [name]`` (reference u.1): what servers offer, the
resource templates too; ``/mcp prompts <server> <prompt> [参数=值 …]`` fetches one prompt
(``prompts/get``) for the user's input (issue 39): the REPL puts it in the prompt to edit and
send, ``-p`` prints it.

Without a name every configured server is listed, each with its entries or one line saying why
not (not running, untrusted, no such capability). Everything a server wrote (URIs, names,
descriptions) is a stranger's text: ``one_line`` makes control characters visible, folds
newlines so a description cannot forge lines of our own, and cuts it short.
"""

from __future__ import annotations

from typing import Any

from paicli.ui.terminal import visible
from paicli.tools.mcp.requests import Unavailable
from paicli.tools.mcp.resources import get_prompt, list_prompts, list_resources, list_templates

MAX_FIELD = 200  # characters of one server-written field on a listing line


def one_line(text: str, limit: int = MAX_FIELD) -> str:
    flat = " ".join(visible(str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def offers(verb: str, name: str, app: Any, say: Any) -> str | None:
    """The listing; or, for ``prompts <server> <prompt> …``, the fetched prompt's text."""
    servers = app.mcp
    name, _, rest = name.partition(" ")
    if name and name not in servers.servers:
        say.fail(f"❌ 未找到 MCP server: {one_line(name, 40)}（/mcp 查看已配置的 server）")
        return
    if not servers.servers:
        say(f"📭 没有配置 MCP server（用户: {app.settings.home / 'mcp.json'}，项目: "
            f"{app.settings.project_root / '.mcp.json'}）")
        return
    if not any(s.task is not None for s in servers.servers.values()):
        servers.start()  # `paicli -p "/mcp resources"`: start them so there is something to ask
    await servers.wait_started()  # the REPL's servers may still be starting: the startup wait, as a turn
    if verb == "prompts" and rest.strip():
        return await fetch_prompt(name, rest.strip(), servers, say)
    for server in [name] if name else list(servers.servers):
        # one named server that cannot answer fails the command; in the full listing it is a line
        await _one(verb, server, servers, say, say.fail if name else say)
    return None


async def fetch_prompt(server: str, rest: str, servers: Any, say: Any) -> str | None:
    import shlex

    try:
        words = shlex.split(rest)
    except ValueError as exc:
        say.fail(f"❌ 参数无法解析（{exc}）：用法 /mcp prompts <server> <名称> [参数=值 …]")
        return None
    prompt_name, given = words[0], words[1:]
    try:
        known = {p.name: p for p in await list_prompts(servers, server)}
        prompt = known.get(prompt_name)
        if prompt is None:
            say.fail(f"❌ MCP server {server} 没有提示词 {one_line(prompt_name, 60)}（/mcp prompts {server} 查看）")
            return None
        arguments = prompt_arguments(prompt, given)
        if isinstance(arguments, str):
            say.fail(arguments)
            return None
        text = await get_prompt(servers, server, prompt_name, arguments)
    except Unavailable as exc:
        say.fail(f"⚠️ {one_line(str(exc), 400)}")
        return None
    return visible(text)  # a stranger's text goes into the input: no control characters


def prompt_arguments(prompt: Any, given: list[str]) -> dict[str, str] | str:
    """``参数=值`` words (a word without ``=`` fills the next argument in order), or why not."""
    names = [n for n, _, _ in prompt.arguments]
    values: dict[str, str] = {}
    for word in given:
        key, eq, value = word.partition("=")
        if eq and key in names:
            values[key] = value
        else:
            free = next((n for n in names if n not in values), None)
            if free is None:
                return f"❌ 提示词 {prompt.name} 没有参数可以接收 {one_line(word, 40)}"
            values[free] = word
    missing = [n for n, required, _ in prompt.arguments if required and n not in values]
    if missing:
        usage = " ".join(f"{n}=<…>" if r else f"[{n}=<…>]" for n, r, _ in prompt.arguments)
        return f"❌ 提示词 {prompt.name} 缺少参数 {'、'.join(missing)}（用法: /mcp prompts <server> {prompt.name} {usage}）"
    return values


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
    if verb == "resources":
        try:
            templates = await list_templates(servers, server)
        except Unavailable:
            templates = []  # a server without templates: nothing to add
        if templates:
            say(f"🧩 MCP server {server} 的资源模板（{len(templates)} 个，填好参数后用 @{server}:<uri> 引用）：")
        for template in templates:
            head = f"   {one_line(template.uri_template)}  {one_line(template.name, 80)}"
            say(head + (f"  ({one_line(template.mime_type, 60)})" if template.mime_type else ""))
            if template.description:
                say(f"      {one_line(template.description)}")


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
