"""Resource links in an MCP tool's result keep their URI and name (issue 39).

``langchain-mcp-adapters`` turns a ``resource_link`` block into a file or image block holding the
URI only, so the model would see neither the link's name nor, in our text rendering, the URI.
This interceptor (``load_mcp_tools(tool_interceptors=[...])``) replaces each link with one text
line before the conversion: name, URI, type and description, which the model can read with the
server's ``read_resource`` tool. The server's words are a stranger's text: flattened to one line.
"""

from __future__ import annotations

from typing import Any

LINK = "[MCP 资源链接] {name} <{uri}>"


def link_line(link: Any) -> str:
    name = " ".join(str(getattr(link, "name", "") or getattr(link, "title", "") or "").split()) or "(无名称)"
    line = LINK.format(name=name, uri=" ".join(str(link.uri).split()))
    if getattr(link, "mimeType", None):
        line += f" ({link.mimeType})"
    description = " ".join(str(getattr(link, "description", "") or "").split())
    return line + (f"：{description[:200]}" if description else "")


async def keep_resource_links(request: Any, handler: Any) -> Any:
    from mcp.types import CallToolResult, ResourceLink, TextContent

    result = await handler(request)
    if not isinstance(result, CallToolResult) or not any(isinstance(c, ResourceLink) for c in result.content):
        return result
    content = [TextContent(type="text", text=link_line(c)) if isinstance(c, ResourceLink) else c for c in result.content]
    return result.model_copy(update={"content": content})
