"""MCP server configuration: the shared ``{"mcpServers": {...}}`` shape, checked entry by entry.

Two files (read by ``paicli.config.settings``): ``$PAICLI_HOME/mcp.json`` is the user's and trusted;
``<project>/.mcp.json`` was written by whoever wrote the repository, so its servers start only
after ``/mcp trust <name>`` (``paicli.tools.mcp.trust``). An entry is either
``{"command", "args"?, "env"?}`` (stdio) or ``{"type": "http", "url", "headers"?}`` (streamable
HTTP). A bad entry costs one line naming the server and what to fix; the others still start.
The file is JSON a stranger may have written: nothing here runs or trusts it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.tools.mcp.names import server_name_problem

HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http"})
DEFAULT_STARTUP_WAIT = 8.0  # reference (x): PAICLI_MCP_STARTUP_WAIT_SECONDS
DEFAULT_CALL_TIMEOUT = 60.0  # PAICLI_MCP_TOOL_TIMEOUT_SECONDS: one tool call, then a failure result


@dataclass(frozen=True)
class ServerConfig:
    name: str
    source: str  # "user" ($PAICLI_HOME/mcp.json) or "project" (<project>/.mcp.json)
    transport: str  # "stdio" or "http"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    disabled: bool = False  # "disabled": true in the file
    digest: str = ""  # sha256 of the entry as written: trust covers exactly this entry

    @property
    def needs_trust(self) -> bool:
        return self.source == "project"

    def describe(self) -> str:
        return self.url if self.transport == "http" else " ".join((self.command, *self.args))


@dataclass(frozen=True)
class McpSetup:
    """What ``paicli.config.settings`` hands on: the servers, the lines about bad entries, the other MCP settings."""

    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[str, ...] = ()
    startup_wait: float = DEFAULT_STARTUP_WAIT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    state_dir: Path | None = None  # $PAICLI_HOME/mcp: trust.json and logs/; None: nothing kept


def digest(entry: Any) -> str:
    return hashlib.sha256(json.dumps(entry, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def parse_document(data: Any, source: str, path: Path) -> tuple[list[ServerConfig], list[str]]:
    """The servers of one file and one line per problem (the file's, or a server's)."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return [], [f"⚠️ MCP 配置 {path} 无效: 需要 {{\"mcpServers\": {{...}}}} 形式的 JSON 对象"]
    found, problems = [], []
    for name, entry in servers.items():
        try:
            found.append(parse_entry(str(name), entry, source))
        except ValueError as exc:
            problems.append(f"⚠️ MCP server {str(name)[:40]!r}（{path}）配置无效: {exc}")
    return found, problems


def parse_entry(name: str, entry: Any, source: str) -> ServerConfig:
    if problem := server_name_problem(name):
        raise ValueError(problem)
    if not isinstance(entry, dict):
        raise ValueError("每个 server 需要一个 JSON 对象")
    kind = str(entry.get("type") or entry.get("transport") or ("stdio" if "command" in entry else "")).lower()
    common = {"name": name, "source": source, "disabled": entry.get("disabled") is True, "digest": digest(entry)}
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ValueError("stdio server 需要非空的 command 字符串")
        return ServerConfig(transport="stdio", command=command, args=_strings(entry.get("args"), "args"),
                            env=_pairs(entry.get("env"), "env"), **common)
    if kind in HTTP_TYPES:
        url = entry.get("url")
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise ValueError("http server 需要 http:// 或 https:// 开头的 url")
        return ServerConfig(transport="http", url=url, headers=_pairs(entry.get("headers"), "headers"), **common)
    raise ValueError(f"不支持的类型 {kind or '（未写 command 或 type）'}：请用 command（stdio）或 \"type\": \"http\"")


def _strings(value: Any, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field} 必须是字符串数组")
    return tuple(value)


def _pairs(value: Any, field: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{field} 必须是值为字符串的对象")
    return tuple((str(k), v) for k, v in value.items())


def merge(user: list[ServerConfig], project: list[ServerConfig]) -> tuple[list[ServerConfig], list[str]]:
    """The user's entry wins a name both files use: a repository cannot replace the user's server."""
    names = {s.name for s in user}
    clashes = [f"⚠️ 项目 .mcp.json 中的 MCP server {s.name} 与用户配置同名，已忽略" for s in project if s.name in names]
    return [*user, *(s for s in project if s.name not in names)], clashes
