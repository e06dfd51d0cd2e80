"""How much of a request a provider's prefix cache can serve: the part identical to the request
before it (issue 13). DeepSeek, Kimi, GLM and OpenAI cache automatically by prefix; what counts
is the longest common prefix of the serialized messages, system prompt first.

Used by ``/context`` (the share of the next request identical to the last one), by the cache
tests and by ``bench/prefix_cache.py``. Pure functions on messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from os.path import commonprefix

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import convert_to_openai_messages


@dataclass(frozen=True)
class PrefixShare:
    """``stable`` of ``total`` characters of a request repeat the previous request's start."""

    stable: int
    total: int

    @property
    def share(self) -> float:
        return self.stable / self.total if self.total else 0.0


def serialize(messages: Sequence[BaseMessage]) -> list[str]:
    """Each message as the provider reads it (OpenAI's chat format), one JSON text per message."""
    return [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in convert_to_openai_messages(list(messages))]


def common_prefix(previous: Sequence[str], following: Sequence[str]) -> int:
    """Characters at the start of ``following`` equal to the start of ``previous``, message by
    message (a whole message compares at C speed; only the first differing one char by char)."""
    chars = 0
    for old, new in zip(previous, following):
        if old == new:
            chars += len(new)
            continue
        return chars + len(commonprefix([old, new]))
    return chars


def prefix_share(previous: Sequence[BaseMessage], following: Sequence[BaseMessage]) -> PrefixShare:
    old, new = serialize(previous), serialize(following)
    return PrefixShare(common_prefix(old, new), sum(map(len, new)))
