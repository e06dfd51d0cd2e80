"""The model client's retries, said as they happen (issue 41): ``⟳ 第 2 次重试（429，等待 5 秒）``.

The openai SDK retries 408/409/429/5xx answers and connection failures itself (``Retry-After``
honoured), silently. Its clients here are subclasses whose wait before a retry first tells the
run: a notice on the graph's custom stream (what the CLI and Studio show), when the call runs
inside a graph; outside one (``/compact``), nothing. The wait is the SDK's own
(``_calculate_retry_timeout``), so the line says how long it really waits.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai

RETRY_LINE = "⟳ 第 {n} 次重试（{why}，等待 {seconds} 秒）"
NO_ANSWER = "连接失败或超时"


def retry_line(n: int, status: int | None, seconds: float) -> str:
    shown = f"{seconds:.0f}" if seconds >= 1 else f"{seconds:.1f}"
    return RETRY_LINE.format(n=n, why=status if status is not None else NO_ANSWER, seconds=shown)


def report(n: int, response: Any, seconds: float) -> None:
    """The retry's notice on the run's stream; the spinner comes back after it (``waiting``)."""
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run: nobody to tell
        return
    status = getattr(response, "status_code", None) if response is not None else None
    try:
        writer({"notice": retry_line(n, status, seconds), "waiting": True})
    except Exception:  # noqa: BLE001 - a notice must never fail the call it is about
        pass


class ReportingAsyncOpenAI(openai.AsyncOpenAI):
    async def _sleep_for_retry(self, *, retries_taken: int, max_retries: int, options: Any,
                               response: Any) -> None:
        seconds = self._calculate_retry_timeout(max_retries - retries_taken, options,
                                                response.headers if response is not None else None)
        report(retries_taken + 1, response, seconds)
        await asyncio.sleep(seconds)


class ReportingOpenAI(openai.OpenAI):
    def _sleep_for_retry(self, *, retries_taken: int, max_retries: int, options: Any, response: Any) -> None:
        seconds = self._calculate_retry_timeout(max_retries - retries_taken, options,
                                                response.headers if response is not None else None)
        report(retries_taken + 1, response, seconds)
        time.sleep(seconds)


def clients(options: dict[str, Any]) -> dict[str, Any]:
    """The four client fields of a langchain chat model, built from its ``options`` (key, base URL,
    timeout, retries, HTTP clients) with the reporting clients."""
    params = {"api_key": options["api_key"], "base_url": options["api_base"], "timeout": options["timeout"],
              "max_retries": options["max_retries"]}
    sync = ReportingOpenAI(**params, http_client=options["http_client"])
    aio = ReportingAsyncOpenAI(**params, http_client=options["http_async_client"])
    return {"root_client": sync, "client": sync.chat.completions,
            "root_async_client": aio, "async_client": aio.chat.completions}
