"""Token estimation (reference a), incremental so it stays cheap on very long histories.

The estimate is PaiCLI's character heuristic, not a tokenizer: CJK characters cost 1/1.5 of a
token, everything else 1/4, counted in UTF-16 code units like Java. A message adds its content
(text parts and images), its tool-call arguments, its reasoning (S1) and 4 tokens of overhead.
Per the decision on Q1 (docs/behavior.md#decisions) the compaction check also counts the system
prompt and the schema of the tools exposed for that call.

``Estimator`` caches each message's count under its id plus a fingerprint of what the count
depends on. Python caches a ``str``'s hash on the object, so re-checking an unchanged message is
a dict lookup; a message rewritten in place (clearing keeps the id) gets a new fingerprint. On top
of that it keeps running totals for the last full history, so a history that only grew since the
previous call costs two C-speed identity scans plus the new messages.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

MESSAGE_OVERHEAD_TOKENS = 4  # reference (a): format overhead per message
URL_IMAGE_TOKENS = 1024  # reference (a): an image given by URL
MIN_IMAGE_TOKENS, MAX_IMAGE_TOKENS, IMAGE_BYTES_PER_TOKEN = 256, 4096, 768  # reference (a)
# reference (a): 0x4E00 < u < 0x9FFF, both bounds exclusive ("一" U+4E00 counts as other).
_CJK = re.compile("[\u4e01-\u9ffe]")
_CACHE_FLOOR = 50_000  # entries kept before stale ones are dropped
_CONTENT = attrgetter("content")


def estimate_text(text: str | None) -> int:
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) / 4.0)
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2  # an emoji is 2 units, as in Java
    cjk = len(text) - len(_CJK.sub("", text))
    return math.ceil(cjk / 1.5 + (units - cjk) / 4.0)


def image_tokens(block: dict[str, Any]) -> int:
    """reference (a): base64 images by decoded size, clamped to 256..4096; URLs cost 1024."""
    data = block.get("base64") or block.get("data")
    url = block.get("url") or block.get("image_url")
    if isinstance(url, dict):
        url = url.get("url")
    if not data and isinstance(url, str) and url.startswith("data:") and "," in url:
        data = url.split(",", 1)[1]
    if not data:
        return URL_IMAGE_TOKENS
    decoded = len(data) * 3 // 4
    return max(MIN_IMAGE_TOKENS, min(MAX_IMAGE_TOKENS, decoded // IMAGE_BYTES_PER_TOKEN))


def is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in ("image", "image_url", "image_base64")


def block_text(block: Any) -> str:
    """The text a content block carries (text, reasoning), or "" for images and unknown kinds."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    for key in ("text", "reasoning", "thinking"):
        value = block.get(key)
        if isinstance(value, str):
            return value
    return ""


def text_of(message: Any) -> str:
    """The text of a message or a streamed chunk: LangChain's ``.text`` (its text blocks joined),
    else its content as a string. The one reading of "what a message says"."""
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def arguments_json(args: Any) -> str:
    """Tool-call arguments as the provider sees them (langchain-openai: ensure_ascii=False)."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def reasoning_of(message: BaseMessage) -> str:
    value = message.additional_kwargs.get("reasoning_content")
    return value if isinstance(value, str) else ""


def message_tokens(message: BaseMessage) -> int:
    """One message, uncached."""
    content = message.content
    if isinstance(content, str):
        total = estimate_text(content)
    else:
        total = sum(image_tokens(b) if is_image(b) else estimate_text(block_text(b)) for b in content)
    if isinstance(message, AIMessage):
        total += sum(estimate_text(arguments_json(c.get("args"))) for c in message.tool_calls)
        total += sum(estimate_text(arguments_json(c.get("args") or "")) for c in message.invalid_tool_calls)
    return total + estimate_text(reasoning_of(message)) + MESSAGE_OVERHEAD_TOKENS


def schema_tokens(tools_schema: Sequence[dict[str, Any]] | None) -> int:
    """reference (a): estimate_text(json(tool definitions)), compact JSON like Jackson."""
    if not tools_schema:
        return 0
    return estimate_text(json.dumps(list(tools_schema), ensure_ascii=False, separators=(",", ":")))


def _block_fingerprint(block: Any) -> Any:
    if isinstance(block, str):
        return hash(block)
    if not isinstance(block, dict):
        return None
    url = block.get("url") or block.get("image_url")
    data = block.get("base64") or block.get("data") or (url.get("url") if isinstance(url, dict) else url)
    return (block.get("type"), hash(block_text(block)), hash(data) if isinstance(data, str) else None)


def _fingerprint(message: BaseMessage) -> tuple:
    # Hashes of str objects are cached by Python, so this is cheap for an unchanged message.
    content = message.content
    content_fp = hash(content) if isinstance(content, str) else tuple(_block_fingerprint(b) for b in content)
    calls = len(message.tool_calls) + len(message.invalid_tool_calls) if isinstance(message, AIMessage) else 0
    return (content_fp, calls, hash(reasoning_of(message)))


class Estimator:
    """Holds the per-message cache; one per process (or per graph) is enough."""

    def __init__(self) -> None:
        self._messages: dict[Any, tuple[tuple, int]] = {}
        self._schema: tuple[Any, int] | None = None  # (the schema list object, its tokens)
        self._system: tuple[str, int] | None = None
        self._last_keys: list[int] = []  # ids of the last history's messages, then of their contents
        self._last_objects: list[Any] = []
        self._prefix: list[int] = [0]  # _prefix[i]: tokens of the first i messages of that history

    def message(self, message: BaseMessage) -> int:
        if not message.id:
            # No stable key: id(message) is reused once the object is collected, so a new
            # message could hit a dead one's entry. State messages always have ids.
            return message_tokens(message)
        key = message.id
        fingerprint = _fingerprint(message)
        hit = self._messages.get(key)
        if hit is not None and hit[0] == fingerprint:
            return hit[1]
        tokens = message_tokens(message)
        self._messages[key] = (fingerprint, tokens)
        return tokens

    def messages(self, messages: Sequence[BaseMessage]) -> int:
        """Messages only (no system prompt, no schema): for parts of a history."""
        return sum(self.message(m) for m in messages)

    def _history(self, messages: Sequence[BaseMessage]) -> int:
        """Sum over the whole history, reusing the running totals of the previous call's list.

        Between two model calls the history usually only grew, by the same message objects, so
        comparing object and content identities (C-speed ``map``) finds the shared prefix and only
        the new messages are looked at. Content replaced on a message object is noticed; other
        in-place edits are not, so rewrite messages with ``model_copy`` (as clearing does)."""
        contents = list(map(_CONTENT, messages))
        keys = list(map(id, messages)) + list(map(id, contents))
        n, last = len(messages), self._last_keys
        m = len(last) // 2
        if m <= n and keys[:m] == last[:m] and keys[n:n + m] == last[m:]:
            common = m
        else:
            common = next((i for i in range(min(n, m)) if keys[i] != last[i] or keys[n + i] != last[m + i]), min(n, m))
        sums = self._prefix[: common + 1]
        for message in messages[common:]:
            sums.append(sums[-1] + self.message(message))
        # Holding the objects keeps their id()s from being reused by new objects.
        self._last_keys, self._last_objects, self._prefix = keys, [*messages, *contents], sums
        return sums[-1]

    def schema(self, tools_schema: Sequence[dict[str, Any]] | None) -> int:
        # The node passes the same schema list object on every call until the tool set changes.
        if self._schema is None or self._schema[0] is not tools_schema:
            self._schema = (tools_schema, schema_tokens(tools_schema))
        return self._schema[1]

    def system(self, system: str | None) -> int:
        if not system:
            return 0
        if self._system is None or self._system[0] != system:
            self._system = (system, estimate_text(system) + MESSAGE_OVERHEAD_TOKENS)
        return self._system[1]

    def estimate(self, messages: Sequence[BaseMessage], tools_schema=None, system: str | None = None) -> int:
        """What the compaction trigger compares against (Q1): system + schema + messages."""
        total = self.system(system) + self.schema(tools_schema) + self._history(messages)
        if len(self._messages) > max(_CACHE_FLOOR, 4 * len(messages)):
            # Forget messages that left the history (compaction, /clear), keyed off the full list.
            live = {m.id or id(m) for m in messages}
            self._messages = {k: v for k, v in self._messages.items() if k in live}
        return total

    def measure(self, tools_schema=None, system: str | None = None) -> "Callable[[Sequence[BaseMessage]], int]":
        """``estimate`` with the system prompt and schema of one model call bound."""
        return lambda messages: self.estimate(messages, tools_schema, system)


DEFAULT_ESTIMATOR = Estimator()


def estimate_messages(messages: Sequence[BaseMessage], tools_schema=None, system: str | None = None) -> int:
    return DEFAULT_ESTIMATOR.estimate(messages, tools_schema, system)
