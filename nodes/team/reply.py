"""The Team's structured replies (reference s.5 item 3): the planner's plan and the reviewer's
verdict must each be exactly one JSON object.

Strict on purpose. The plan decides what runs and the verdict whether a result is accepted, so
a reply that is only nearly JSON (a second object after the first, a key given twice, prose
around it) is refused rather than guessed at. The one decoration tolerated is a single Markdown
fence around the whole reply, because models add it even when told not to.
"""

from __future__ import annotations

import json
from typing import Any

# reference s.5 item 3: the two texts it gives verbatim.
FENCE_LANGUAGE = "代码块语言必须为 json"
FENCE_UNCLOSED = "代码块围栏不完整"
# The reference names these rules without their wording; ours.
NOT_JSON = "回复不是合法的 JSON：{error}"
NOT_OBJECT = "回复必须是单个 JSON 对象"
TRAILING = "JSON 对象之后还有多余内容"
DUPLICATE_KEY = "JSON 对象中存在重复键：{key}"
NOT_A_NUMBER = "JSON 中不允许 {value}"

FENCE = "```"


class ReplyError(ValueError):
    """The reply is not one JSON object; the message says why, in the user's language."""


def parse_object(text: str) -> dict[str, Any]:
    """The one JSON object of ``text``, or ``ReplyError``."""
    body = unfence(text)
    decoder = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    try:
        value, end = decoder.raw_decode(body)
    except json.JSONDecodeError as error:
        raise ReplyError(NOT_JSON.format(error=f"第 {error.lineno} 行第 {error.colno} 列有误")) from None  # json's words are English
    if body[end:].strip():
        raise ReplyError(TRAILING)
    if not isinstance(value, dict):
        raise ReplyError(NOT_OBJECT)
    return value


def unfence(text: str) -> str:
    """The reply without one fence around all of it; an unfenced reply is returned trimmed."""
    body = text.strip()
    if not body.startswith(FENCE):
        return body
    opening, newline, rest = body.partition("\n")
    if opening[len(FENCE):].strip().lower() not in ("", "json"):
        raise ReplyError(FENCE_LANGUAGE)
    lines = rest.split("\n") if newline else []
    closing = next((i for i, line in enumerate(lines) if line.strip() == FENCE), None)
    if closing is None:
        raise ReplyError(FENCE_UNCLOSED)
    if "\n".join(lines[closing + 1:]).strip():
        raise ReplyError(TRAILING)  # the fence closed before the reply did: not around the whole reply
    return "\n".join(lines[:closing]).strip()


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ReplyError(DUPLICATE_KEY.format(key=key))
        seen[key] = value
    return seen


def _no_constant(value: str) -> Any:
    raise ReplyError(NOT_A_NUMBER.format(value=value))  # NaN / Infinity are not JSON
