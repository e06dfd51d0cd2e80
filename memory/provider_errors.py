"""Reading errors from OpenAI-compatible providers: overflow detection and one-line messages.

ARCHITECTURE.md Q3: overflow = a BadRequestError with code ``context_length_exceeded``, or a
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
