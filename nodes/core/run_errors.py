"""Run failures a caller of the graph must see as failures, not as a quiet end of the turn.

The CLI reads a provider failure from ``state["error"]`` and prints it; a server run
(``langgraph dev``, Studio, the SDK) only knows a run failed when the graph raises, so the
server's graph ends in ``report_failure`` when ``error`` is set. Input with no user message is
refused before anything is sent to the model, for every caller.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from paicli.nodes.core.state import AgentState

NO_USER_MESSAGE = ("the input has no user message: send {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]} / "
                   "输入中没有用户消息")


class ModelCallFailed(RuntimeError):
    """The model call failed for good; the message is the CLI's ``❌ 调用 LLM 失败: …`` line."""


class NoUserMessage(ValueError):
    """A turn was started without a user message to answer."""


def require_user_message(messages: list[BaseMessage]) -> None:
    last = messages[-1] if messages else None
    content = getattr(last, "content", None)
    if not isinstance(last, HumanMessage) or not (content.strip() if isinstance(content, str) else content):
        raise NoUserMessage(NO_USER_MESSAGE)


def report_failure(state: AgentState) -> dict[str, Any]:
    """The server graph's last node when ``error`` is set: the history stays as it was saved."""
    raise ModelCallFailed(state.get("error") or "❌ 调用 LLM 失败")


def route_end(state: AgentState) -> str:
    return "report_failure" if state.get("error") else "__end__"
