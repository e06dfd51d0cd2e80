"""The model's own way to MCP resources: ``mcp__<server>__list_resources`` and
``mcp__<server>__read_resource``, two virtual tools per server that announced ``resources``.

PaiCLI has such tools (reference t, S2 ``McpResourceTool``) but their names were not read;
these follow the ``mcp__<server>__<tool>`` form so everything keyed on it treats them as the
server's tools: they ask for approval at every level ("approve all" covers the server, v.1),
their results are external content (o.1: their facts are an MCP tool's, as the adapter gives), wrapped as untrusted data (r), offloaded when long
(d.1) and run alone in a batch (s.8). A tool of the server with the same name wins.
Every failure is a typed ``MCP 工具调用失败: …`` result the model can react to.
"""

from __future__ import annotations

from typing import Any

from paicli.tools.base import ToolContext, ToolSpec, ToolText, failed
from paicli.tools.facts import mcp_default
from paicli.tools.mcp.names import tool_name
from paicli.tools.mcp.requests import Sessions, Unavailable
from paicli.tools.mcp.resources import list_resources, read_resource

LIST = "list_resources"
READ = "read_resource"


def resource_specs(server: str, servers: Sessions) -> dict[str, ToolSpec]:
    async def list_all(_args: dict[str, Any], _ctx: ToolContext) -> ToolText:
        try:
            found = await list_resources(servers, server)
        except Unavailable as exc:
            return failed(f"MCP 工具调用失败: {exc}")
        lines = [f"- {r.uri} | {r.name} | {r.mime_type or '-'} | {' '.join(r.description.split())}" for r in found]
        return ToolText("\n".join(lines) if lines else f"MCP server {server} 没有提供资源")

    async def read_one(args: dict[str, Any], _ctx: ToolContext) -> ToolText:
        uri = str(args.get("uri") or "").strip()
        if not uri:
            return failed("MCP 工具调用失败: uri 不能为空（先用 list_resources 查看可用的 uri）")
        try:
            return ToolText(await read_resource(servers, server, uri))
        except Unavailable as exc:
            return failed(f"MCP 工具调用失败: {exc}")

    where = f"(MCP server: {server})"
    specs = [
        ToolSpec(tool_name(server, LIST), f"列出 MCP server 提供的资源：uri | 名称 | 类型 | 说明 {where}",
                 {"type": "object", "properties": {}}, list_all, is_async=True,
                 extra={"mcp_server": server, "mcp_tool": LIST}, facts=mcp_default(tool_name(server, LIST))),
        ToolSpec(tool_name(server, READ), f"读取 MCP server 的一个资源的内容（uri 来自 {tool_name(server, LIST)}） {where}",
                 {"type": "object", "properties": {"uri": {"type": "string", "description": "资源的 uri"}},
                  "required": ["uri"]}, read_one, is_async=True, extra={"mcp_server": server, "mcp_tool": READ},
                 facts=mcp_default(tool_name(server, READ))),
    ]
    return {spec.name: spec for spec in specs}
