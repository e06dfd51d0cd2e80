"""What every tool shares: its spec, the context it runs in, and the policy error.

A tool is a plain function of (arguments, context) returning the result text the model
reads. Sync tools run in a worker thread; async tools (shell) run on the event loop.
Errors a model can react to are returned as text or raised as ``PolicyError``; the
executor turns anything else into ``工具执行失败: <msg>`` so the loop never crashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Union

ToolResult = str
SyncToolFn = Callable[[dict[str, Any], "ToolContext"], ToolResult]
AsyncToolFn = Callable[[dict[str, Any], "ToolContext"], Awaitable[ToolResult]]


class PolicyError(Exception):
    """A guard refused the call; shown to the model as ``🛡️ 策略拒绝: <reason>``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ToolContext:
    """Per-run facts a tool needs. Built by the executor from the runtime context."""

    root: Path  # project root, already resolved (realpath)
    session_id: str = "default"
    command_timeout: float = 60.0  # reference (t): execute_command 60 s
    env: dict[str, str] | None = None  # environment for subprocesses (None = inherit)
    offloader: Any = None  # memory.offload.ToolResultOffloader: where oversized output goes (tier 1)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema: {"type":"object","properties":{...},"required":[...]}
    fn: Union[SyncToolFn, AsyncToolFn]
    is_async: bool = False
    parallel_safe: bool = False  # reference s.8 PARALLEL_SAFE_TOOLS
    extra: dict[str, Any] = field(default_factory=dict)

    def schema(self) -> dict[str, Any]:
        """OpenAI function-tool format, accepted by ``bind_tools``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }
