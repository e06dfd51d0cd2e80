"""Cached input tokens from a provider's usage, in each provider's spelling (issue 13).

- OpenAI and GLM: ``usage.prompt_tokens_details.cached_tokens`` (langchain-openai reads it);
- DeepSeek: ``usage.prompt_cache_hit_tokens`` (langchain-deepseek reads it);
- Kimi (Moonshot): ``usage.cached_tokens`` at the top level, which neither library reads.

All end up in ``usage_metadata["input_token_details"]["cache_read"]``, where the session counts
them for the token line and ``/memory``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

SPELLINGS = (("prompt_tokens_details", "cached_tokens"), ("prompt_cache_hit_tokens",), ("cached_tokens",))


def cached_input_tokens(usage: Any) -> int | None:
    """The cache hits a usage object reports under any known spelling, or None."""
    if hasattr(usage, "model_dump"):
        usage = usage.model_dump()  # extra fields (Kimi's, DeepSeek's) are kept as extras
    for path in SPELLINGS:
        value: Any = usage
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def response_usage(response: Any) -> Any:
    return response.get("usage") if isinstance(response, dict) else getattr(response, "usage", None)


def record_cache_read(message: Any, usage: Any) -> None:
    """Put the cache hits of ``usage`` into ``message``'s usage metadata unless the client did."""
    cached = cached_input_tokens(usage)
    if cached is None or not isinstance(message, AIMessage) or message.usage_metadata is None:
        return
    details = dict(message.usage_metadata.get("input_token_details") or {})
    if "cache_read" not in details:
        message.usage_metadata = {**message.usage_metadata, "input_token_details": {**details, "cache_read": cached}}
