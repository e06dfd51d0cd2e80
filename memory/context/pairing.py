"""Keeping the tool-call protocol intact: every assistant tool call has exactly one result.

A turn cancelled with Ctrl-C (or a process killed) can leave an assistant message whose tool
calls never got results; providers answer such a request with a 400. ``repair_pairing``
gives each unanswered call a synthetic result saying it was cancelled, right after its call,
and drops tool results whose call is gone.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from paicli.memory.context.outcome import decided_artifact

CANCELLED_RESULT = "用户取消了此次工具调用"  # reference s.7


def call_ids(message: AIMessage) -> list[str]:
    """Ids of every call the provider will see, including calls whose JSON did not parse."""
    calls = [c.get("id") for c in message.tool_calls] + [c.get("id") for c in message.invalid_tool_calls]
    return [c for c in calls if c]


def unanswered_calls(messages: list[AnyMessage]) -> list[str]:
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return [cid for m in messages if isinstance(m, AIMessage) for cid in call_ids(m) if cid not in answered]


def repair_pairing(messages: list[AnyMessage]) -> list[AnyMessage] | None:
    """The repaired list, or ``None`` when nothing needed repair (the common case)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    issued = {cid for m in messages if isinstance(m, AIMessage) for cid in call_ids(m)}
    if answered == issued and not unanswered_calls(messages):
        return None
    repaired: list[AnyMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id not in issued:
            continue
        repaired.append(message)
        if isinstance(message, AIMessage):
            names = {c.get("id"): c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]}
            for cid in call_ids(message):
                if cid not in answered:
                    repaired.append(ToolMessage(CANCELLED_RESULT, tool_call_id=cid, name=names.get(cid) or "",
                                                status="error", artifact=decided_artifact()))
    return repaired
