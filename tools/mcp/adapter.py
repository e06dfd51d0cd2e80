"""One MCP tool as a paicli ``ToolSpec`` (reference t): name, the server's schema, description.

The tool itself is the LangChain tool ``langchain_mcp_adapters.tools.load_mcp_tools`` made over
the server's live session; ``McpServers.call`` runs it on the servers' own event loop. What
the model reads: the content's text blocks, one line per non-text block; a failure is a typed
``failed`` result (``MCP 工具调用失败: …`` or ``MCP 工具返回错误: …``, reference s.8).
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

from paicli.tools.base import ToolContext, ToolSpec
from paicli.tools.browser.facts import mcp_facts
from paicli.tools.facts import mcp_default
from paicli.tools.mcp.names import tool_name

DEFAULT_DESCRIPTION = "MCP server 提供的外部工具"  # reference (t)
CallFn = Callable[[str, str, dict[str, Any]], Awaitable[str]]


def tool_spec(server: str, tool: Any, call: CallFn) -> ToolSpec:
    """``tool`` is a LangChain ``BaseTool`` from the adapters; ``call(server, tool, args)`` runs it."""
    original = tool.name

    async def run(args: dict[str, Any], _ctx: ToolContext) -> str:
        return await call(server, original, args)

    description = f"{(tool.description or '').strip() or DEFAULT_DESCRIPTION} (MCP server: {server}, tool: {original})"
    # Its facts come with the spec (paicli issue 36): a browser server's tools are browser tools
    # (issue 40), the others MCP tools (a web_fetch or web_search one a fetch or a search).
    name = tool_name(server, original)
    return ToolSpec(name, description, schema_of(tool), run, is_async=True,
                    extra={"mcp_server": server, "mcp_tool": original},
                    facts=mcp_facts(server, original) or mcp_default(name))


def schema_of(tool: Any) -> dict[str, Any]:
    """The server's input schema as given; an object schema at least, as the providers demand."""
    schema = tool.args_schema if isinstance(tool.args_schema, dict) else tool.get_input_schema().model_json_schema()
    schema = dict(schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def content_text(content: Any) -> str:
    """The adapters' content (a string or LangChain content blocks) as the text the model reads."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type', 'content')} 内容未显示: {block.get('mime_type') or block.get('url') or ''}]")
        else:
            parts.append(json.dumps(block, ensure_ascii=False, default=str))
    return "\n".join(parts)
