"""What a running MCP server offers besides tools: its resources and prompts (reference u.1).

``/mcp resources`` and ``/mcp prompts`` list them; ``@server:uri`` mentions read one
(``paicli.tools.mcp.mentions``). Each is one request on the server's live ``ClientSession``
(``McpServers.on_session``), asked only when the server announced the capability at
``initialize``. The answers are the server's words, kept as plain data here; whoever prints
them makes them safe for the terminal, whoever gives them to the model wraps them as data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paicli.tools.mcp.requests import Sessions, Unavailable

@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    mime_type: str
    description: str


@dataclass(frozen=True)
class Template:
    uri_template: str
    name: str
    mime_type: str
    description: str


@dataclass(frozen=True)
class Prompt:
    name: str
    description: str
    arguments: tuple[tuple[str, bool, str], ...]  # (name, required, description)


def _check(session: Any, server: str, capability: str) -> None:
    capabilities = session.get_server_capabilities()
    if capabilities is None or getattr(capabilities, capability, None) is None:
        raise Unavailable(f"MCP server {server} 不支持 {capability}")


async def list_resources(servers: Sessions, server: str) -> list[Resource]:
    async def request(session: Any) -> list[Resource]:
        _check(session, server, "resources")
        found, cursor = [], None
        while True:  # the listing is paginated; follow the cursor to the end
            page = await session.list_resources(cursor=cursor) if cursor else await session.list_resources()
            found += [Resource(str(r.uri), r.name or "", r.mimeType or "", r.description or "")
                      for r in page.resources]
            cursor = page.nextCursor
            if not cursor:
                return found

    return await servers.on_session(server, request)


async def list_prompts(servers: Sessions, server: str) -> list[Prompt]:
    async def request(session: Any) -> list[Prompt]:
        _check(session, server, "prompts")
        found, cursor = [], None
        while True:
            page = await session.list_prompts(cursor=cursor) if cursor else await session.list_prompts()
            found += [Prompt(p.name, p.description or "",
                             tuple((a.name, bool(a.required), a.description or "") for a in p.arguments or ()))
                      for p in page.prompts]
            cursor = page.nextCursor
            if not cursor:
                return found

    return await servers.on_session(server, request)


async def list_templates(servers: Sessions, server: str) -> list[Template]:
    """``resources/templates/list`` (issue 39): URI templates the server can fill."""
    async def request(session: Any) -> list[Template]:
        _check(session, server, "resources")
        found, cursor = [], None
        while True:
            page = (await session.list_resource_templates(cursor=cursor) if cursor
                    else await session.list_resource_templates())
            found += [Template(str(t.uriTemplate), t.name or "", t.mimeType or "", t.description or "")
                      for t in page.resourceTemplates]
            cursor = page.nextCursor
            if not cursor:
                return found

    return await servers.on_session(server, request)


async def get_prompt(servers: Sessions, server: str, name: str, arguments: dict[str, str]) -> str:
    """``prompts/get`` (issue 39): the prompt's messages as one text, for the user's input. A
    message's text parts are kept; other parts (images, audio) become one line each."""
    async def request(session: Any) -> str:
        _check(session, server, "prompts")
        result = await session.get_prompt(name, arguments or None)
        return "\n\n".join(_prompt_text(message.content) for message in result.messages).strip()

    return await servers.on_session(server, request)


def _prompt_text(content: Any) -> str:
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text
    resource = getattr(content, "resource", None)
    if resource is not None:
        return _content_text(resource)
    return f"[{getattr(content, 'type', 'content')} 内容未展示]"


async def read_resource(servers: Sessions, server: str, uri: str) -> str:
    """The resource's text contents joined; one line per binary part (never decoded)."""
    from pydantic import AnyUrl, ValidationError

    try:
        url = AnyUrl(uri)
    except ValidationError:
        raise Unavailable(f"无效的资源 URI: {uri}") from None

    async def request(session: Any) -> str:
        _check(session, server, "resources")
        result = await session.read_resource(url)
        return "\n".join(_content_text(part) for part in result.contents)

    return await servers.on_session(server, request)


def _content_text(part: Any) -> str:
    text = getattr(part, "text", None)
    if isinstance(text, str):
        return text
    blob = getattr(part, "blob", "") or ""
    return f"[二进制资源内容未展示: {part.mimeType or 'application/octet-stream'}, 约 {len(blob) * 3 // 4} 字节]"
