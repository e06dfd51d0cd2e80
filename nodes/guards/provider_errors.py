"""Reading errors from OpenAI-compatible providers: overflow detection and one-line messages.

Q3 (docs/behavior.md#decisions): overflow = a BadRequestError with code ``context_length_exceeded``, or a
400 whose message talks about context/length/tokens being too long or over a maximum.
langchain-openai does not map these to ``ContextOverflowError`` (langgraph-notes §6.2), so we
look at the status, the code and the message ourselves, without importing openai here.
"""

from __future__ import annotations

import re

_OVERFLOW_TEXT = re.compile(
    r"context[ _](length|window)|maximum context|too long|too many tokens|"
    r"(input|prompt)[ _]tokens? .*(exceed|limit)|exceeds? the (context|maximum)",
    re.IGNORECASE,
)


def _message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc)


# Transport errors (httpx, httpcore, h11, the OS) that mean the server closed the connection
# before the response was complete, wherever they sit in the exception's cause chain.
_DROPPED_TYPES = frozenset({"RemoteProtocolError", "ReadError", "ConnectionResetError",
                            "ConnectionAbortedError", "BrokenPipeError", "IncompleteRead"})


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def is_dropped_connection(exc: BaseException) -> bool:
    return any(type(e).__name__ in _DROPPED_TYPES for e in _causes(exc))


def _dropped_detail(exc: BaseException) -> str:
    """The transport's own words ("peer closed connection without sending complete message
    body"), not the client's generic "Connection error."."""
    for e in _causes(exc):
        if type(e).__name__ in _DROPPED_TYPES and str(e).strip():
            return str(e).strip()
    return type(exc).__name__


def is_context_overflow(exc: BaseException) -> bool:
    if type(exc).__name__ in ("ContextOverflowError", "OpenAIAPIContextOverflowError"):
        return True
    if getattr(exc, "code", None) == "context_length_exceeded":
        return True
    if getattr(exc, "status_code", None) != 400:
        return False
    return bool(_OVERFLOW_TEXT.search(_message(exc)))


def describe_provider_error(exc: BaseException) -> str:
    """One line for ``❌ 调用 LLM 失败: …``: status, the provider's own message, and a hint
    when the user can fix it."""
    status = getattr(exc, "status_code", None)
    if status is None and is_dropped_connection(exc):
        return f"与模型服务的连接在响应完成前中断（{_dropped_detail(exc)}）"
    text = _message(exc).strip() or type(exc).__name__
    if status and not text.startswith(("Error code", "HTTP")):
        text = f"HTTP {status}: {text}"
    if status in (401, 403):
        text += "（请检查 PAICLI_API_KEY 与 PAICLI_BASE_URL）"
    elif status == 404:
        text += "（请检查 PAICLI_MODEL 与 PAICLI_BASE_URL）"
    elif status is None and any(word in type(exc).__name__ for word in ("Connection", "Timeout")):
        text = f"无法连接到模型服务（{text}）；请检查 PAICLI_BASE_URL 与网络"
    return text
