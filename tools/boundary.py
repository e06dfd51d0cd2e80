"""Marks tool output as untrusted data before it enters history (reference r).

Whatever a file, web page or command printed is data, not instructions. The wrapper
makes that visible to the model, and the escaping keeps content from closing the
wrapper early and smuggling text outside it.
"""

from __future__ import annotations

import html
import re
from typing import Any

_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.:-]")
# reference (r), Q17: escape `<tool_result` / `</tool_result` case-insensitively; spaced forms stay.
_TAG_START = re.compile(r"<(/?tool_result)", re.IGNORECASE)
# The same for an MCP resource a user mentioned (reference s.1 item 2): its wrapper's tag too.
_RESOURCE_TAG_START = re.compile(r"<(/?(?:tool_result|resource))", re.IGNORECASE)


MASK = "••••（已隐藏）"
MIN_MASKED_CHARS = 6  # a shorter value would mask ordinary words


def mask_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """paicli issue 34 item 7, the second line: the API key's and the database password's values
    never reach the model or the ledger in a tool's output, whatever printed them."""
    for secret in secrets:
        if len(secret) >= MIN_MASKED_CHARS and secret in text:
            text = text.replace(secret, MASK)
    return text


def mask_secrets_in(value: Any, secrets: tuple[str, ...]) -> Any:
    """``mask_secrets`` through a tool's artifact (dicts, lists and their strings): it is kept in
    the ledger beside the text, e.g. the last lines of a command's output (issue 41)."""
    if not secrets:
        return value
    if isinstance(value, str):
        return mask_secrets(value, secrets)
    if isinstance(value, dict):
        return {k: mask_secrets_in(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(mask_secrets_in(v, secrets) for v in value)
    return value


def sanitize_name(tool_name: str) -> str:
    """Keeps a hostile MCP tool name from adding attributes to the tag."""
    return _UNSAFE_NAME_CHARS.sub("_", tool_name)


def escape_content(content: str) -> str:
    return _TAG_START.sub(r"&lt;\1", content)


def wrap(tool_name: str, content: str) -> str:
    return (
        f'<tool_result tool="{sanitize_name(tool_name)}" trust="untrusted-data">\n'
        f"{escape_content(content)}\n"
        "</tool_result>"
    )


def wrap_resource(server: str, uri: str, content: str) -> str:
    """An MCP resource's contents as untrusted data; the URI (typed by the user) is escaped so
    it cannot add attributes, the contents so they cannot close the wrapper."""
    escaped = _RESOURCE_TAG_START.sub(r"&lt;\1", content)
    return (
        f'<resource server="{sanitize_name(server)}" uri="{html.escape(uri, quote=True)}" trust="untrusted-data">\n'
        f"{escaped}\n"
        "</resource>"
    )


def unwrap(text: str) -> str:
    """The tool's own text inside a wrapper (escaping left as is); other text unchanged."""
    if not text.startswith("<tool_result "):
        return text
    head, _, rest = text.partition("\n")
    return rest[: -len("\n</tool_result>")] if rest.endswith("\n</tool_result>") else rest
