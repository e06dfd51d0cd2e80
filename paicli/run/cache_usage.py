"""Provider usage that langchain-openai does not read: cache hits in each provider's spelling
(issue 13) and Kimi's streamed usage in ``choices[0].usage``.

- OpenAI and GLM: ``usage.prompt_tokens_details.cached_tokens`` (langchain-openai reads it);
- DeepSeek: ``usage.prompt_cache_hit_tokens`` (langchain-deepseek reads it);
- Kimi (Moonshot): ``usage.cached_tokens``, directly in the usage object, which neither library reads.

All end up in ``usage_metadata["input_token_details"]["cache_read"]``, where the session counts
them for the token line and ``/memory``.

Streaming, langchain-openai reads only the top-level ``usage`` of a chunk (OpenAI sends it in a
trailing chunk without choices). Moonshot puts it in ``choices[0].usage`` of the finish chunk
instead, and some of its models send the same figures again at the top level. A stream's
``StreamUsage`` holds the choice usage until the stream ends and hands it on, as the trailing
chunk OpenAI would have sent, only if no top-level usage came: counted once either way.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

CHOICE_USAGE = "paicli_choice_usage"  # generation_info key; taken out before anyone else sees it
COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")
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


def choice_usage(chunk: dict) -> dict | None:
    """The usage a stream chunk carries in ``choices[0]`` (Moonshot's place), unless it has a top-level one."""
    choices = chunk.get("choices")
    if chunk.get("usage") or not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    usage = choices[0].get("usage")
    if not isinstance(usage, dict) or not usage:
        return None
    # The counts are summed later: a count that is no number would break the turn, so drop it all.
    counts = [usage.get(key) for key in COUNTS if key in usage]
    return usage if all(isinstance(c, int) and not isinstance(c, bool) for c in counts) else None


class StreamUsage:
    """One stream's usage: top-level usage wins; choice usage waits for the end of the stream."""

    def __init__(self) -> None:
        self.held: dict | None = None
        self.reported = False

    def see(self, generation: Any) -> Any:
        """Take held choice usage off ``generation``; note top-level usage. Returns ``generation``."""
        info = generation.generation_info or {}
        if CHOICE_USAGE in info:
            self.held = info.pop(CHOICE_USAGE)
        elif getattr(generation.message, "usage_metadata", None):
            self.reported = True
        return generation

    def trailing_chunk(self) -> dict | None:
        """The usage-only chunk, OpenAI's shape, to convert after the stream; None when not needed."""
        return None if self.reported or self.held is None else {"choices": [], "usage": self.held}
