"""Reading errors from OpenAI-compatible providers: overflow detection and one-line messages.

Issue 41: the line a person reads after the client's last retry says the status, what it means,
how often it was retried (the SDK's ``x-stainless-retry-count`` on the last request) and what to
do; transport failures (a dropped stream, a refused connection) are told in Chinese, with the
transport's error type for whoever reads logs.

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


# What the transport's errors mean, by a piece of their (English) text.
_TRANSPORT_WORDS = (
    ("peer closed connection", "服务端在响应发完之前关闭了连接"),
    ("incomplete chunked read", "服务端在响应发完之前关闭了连接"),
    ("server disconnected without sending a response", "服务端没有回应就断开了连接"),
    ("connection reset", "连接被对方重置"),
    ("broken pipe", "连接已断开"),
    ("all connection attempts failed", "连接被拒绝（该地址没有服务在监听）"),
    ("connection refused", "连接被拒绝（该地址没有服务在监听）"),
    ("name or service not known", "域名无法解析"),
    ("temporary failure in name resolution", "域名无法解析"),
    ("nodename nor servname", "域名无法解析"),
    ("certificate", "TLS 证书校验失败"),
    ("timed out", "等待响应超时"),
)


def _transport_detail(exc: BaseException) -> str:
    """The transport's failure in Chinese, with its type: ``服务端在响应发完之前关闭了连接（RemoteProtocolError）``."""
    chain = _causes(exc)
    for e in chain:
        text = str(e).lower()
        for words, meaning in _TRANSPORT_WORDS:
            if words in text:
                return f"{meaning}（{type(e).__name__}）"
    inner = next((e for e in reversed(chain) if e is not exc), exc)
    return f"连接出错（{type(inner).__name__}）"


def retries_of(exc: BaseException) -> int:
    """How many times the client retried before giving up: the last request's retry count."""
    try:  # httpx raises RuntimeError for the request of a response made without one
        response = getattr(exc, "response", None)
        request = getattr(response, "request", None) if response is not None else getattr(exc, "request", None)
    except RuntimeError:
        request = None
    raw = request.headers.get("x-stainless-retry-count") if request is not None else None
    return int(raw) if raw and raw.isdigit() else 0


# status -> (what it means, what to do)
_STATUS_HINTS = {
    400: ("请求被模型服务拒绝", "请检查 PAICLI_MODEL 与 PAICLI_BASE_URL"),
    401: ("密钥无效或无权访问", "请检查 PAICLI_API_KEY 与 PAICLI_BASE_URL"),
    403: ("密钥无效或无权访问", "请检查 PAICLI_API_KEY 与 PAICLI_BASE_URL"),
    404: ("模型或接口地址不存在", "请检查 PAICLI_MODEL 与 PAICLI_BASE_URL"),
    408: ("模型服务等待请求超时", "请稍后再试"),
    409: ("模型服务报告请求冲突", "请稍后再试"),
    413: ("请求太大", "请用 /compact 压缩上下文后再试"),
    429: ("请求过于频繁，或账户额度已用完", "请稍等片刻再试，或检查账户的额度与限流"),
}
_SERVER_HINT = ("模型服务内部出错", "这是服务端的问题，请稍后再试，或用 /model 换一个模型")


SMALLER_WINDOW = ("模型报告上下文超限，而这次请求估计只有约 {tokens} tokens，小于配置的窗口 {window}："
                  "模型的实际窗口可能更小，请把 PAICLI_CONTEXT_WINDOW 设为它的真实大小")


def smaller_window(tokens: int, window: int) -> str | None:
    """Issue 41: an overflow of a request the estimate puts under the configured window means the
    model's real window is smaller than ``PAICLI_CONTEXT_WINDOW`` (or its preset) says."""
    return SMALLER_WINDOW.format(tokens=tokens, window=window) if tokens < window else None


def is_context_overflow(exc: BaseException) -> bool:
    if type(exc).__name__ in ("ContextOverflowError", "OpenAIAPIContextOverflowError"):
        return True
    if getattr(exc, "code", None) == "context_length_exceeded":
        return True
    if getattr(exc, "status_code", None) != 400:
        return False
    return bool(_OVERFLOW_TEXT.search(_message(exc)))


def describe_provider_error(exc: BaseException) -> str:
    """One line for ``❌ 调用 LLM 失败: …``: the status and the provider's own message, then in
    brackets what it means, the retries made and what to do."""
    status = getattr(exc, "status_code", None)
    retried = retries_of(exc)
    tried = f"，已重试 {retried} 次" if retried else ""
    if status is None and is_dropped_connection(exc):
        return f"与模型服务的连接在响应完成前中断：{_transport_detail(exc)}{tried}；请稍后再试"
    if status is None and any(word in type(exc).__name__ for word in ("Connection", "Timeout")):
        what = "模型服务没有在时限内响应" if "Timeout" in type(exc).__name__ else "无法连接到模型服务"
        return f"{what}：{_transport_detail(exc)}{tried}；请检查 PAICLI_BASE_URL 与网络"
    text = _message(exc).strip() or type(exc).__name__
    if not status:
        return text
    if not text.startswith(("Error code", "HTTP")):
        text = f"HTTP {status}: {text}"
    meaning, fix = _STATUS_HINTS.get(status) or (_SERVER_HINT if status >= 500 else ("请求失败", "请稍后再试"))
    return f"{text}（{meaning}{tried}；{fix}）"
