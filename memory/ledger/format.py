"""PaiCLI ledger lines (reference h.2) and LangChain messages as PaiCLI message records (reference 0.1).

Pure functions, no file access; ``paicli.memory.ledger.saver`` (the checkpointer) writes and reads what these
build.

- An *event* is one ledger line: the h.2 envelope, fields in the order PaiCLI writes them.
- A *message record* is PaiCLI's ``Message`` (camelCase keys, null fields included), so people
  and PaiCLI can read the conversation. What LangChain needs beyond it to rebuild the exact
  object (id, name, status, other additional_kwargs, response/usage metadata, invalid calls, the
  class) is ``lc``: plain JSON holding only non-default fields. Every conversion is checked by
  rebuilding; a message that does not come back exact (a custom object in its metadata, an
  artifact) keeps its record for people and is stored whole as ``lc = {"id", "$typed"}``.
- A *value* (channel value, pending write, checkpoint metadata) is plain JSON when it is plain
  JSON; one-key tag objects mark the rest: ``{"$msg": seq}`` a message stored as its own event,
  ``{"$anon": seq}`` the message of that event as it was given, without an id (issue 10: a
  message on its way into the conversation is stored once, before ``add_messages`` names it),
  ``{"$text": seq}`` the content of that event (the ``content`` of a message given as a dict),
  ``{"$message": [record, lc]}`` a message stored in place, ``{"$typed": [type, base64]}`` the
  serializer's bytes, ``{"$dict": {...}}`` a dict that would look like a tag.

Versions and metadata as changes on the parent's: ``paicli.memory.ledger.deltas``; the session list:
``paicli.memory.ledger.sessions``.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import (
    AIMessage, AIMessageChunk, BaseMessage, ChatMessage, ChatMessageChunk, FunctionMessage,
    FunctionMessageChunk, HumanMessage, HumanMessageChunk, RemoveMessage, SystemMessage,
    SystemMessageChunk, ToolMessage, ToolMessageChunk,
)

SCHEMA_VERSION = 1  # reference h.2
_CLASSES = {c.model_fields["type"].default: c for c in (
    HumanMessage, AIMessage, ToolMessage, SystemMessage, ChatMessage, FunctionMessage,
    HumanMessageChunk, AIMessageChunk, ToolMessageChunk, SystemMessageChunk, ChatMessageChunk,
    FunctionMessageChunk)}
_ROLES = ((ChatMessage, None), (HumanMessage, "user"), (AIMessage, "assistant"),
          (ToolMessage, "tool"), (SystemMessage, "system"), (FunctionMessage, "function"))
_TYPE_OF_ROLE = {"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}
_IN_RECORD = frozenset({"content", "tool_calls", "tool_call_id", "role", "type"})
_IMAGES_NOTE = "[已附加 {} 张图片]"  # reference 0.1: derived content of a user message with images
_DEFAULT_MIME = "image/png"  # reference 0.1


# -- events -----------------------------------------------------------------------------------
def make_event(session_id: str, sequence: int, name: str, *, mode: str, actor: str, source: str,
               message: dict | None = None, metadata: dict | None = None) -> dict:
    return {"schemaVersion": SCHEMA_VERSION, "sessionId": session_id, "sequence": sequence,
            "timestamp": int(time.time() * 1000), "event": _label(name, "event"),
            "mode": _label(mode), "actor": _label(actor), "source": _label(source),
            "message": message, "metadata": {} if metadata is None else metadata}


def _label(value: Any, blank: str = "unknown") -> str:
    """reference h.2: labels are trimmed; blank ones become ``unknown`` (event names ``event``)."""
    text = str(value or "").strip()
    return text or blank


def encode_line(event: dict) -> bytes:
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only the escaped form is valid UTF-8
        return (json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


def decode_line(line: bytes) -> dict | None:
    """The event on ``line``, or ``None`` when the line is torn or garbled."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if (not isinstance(event, dict) or type(event.get("sequence")) is not int
            or not isinstance(event.get("event"), str) or not isinstance(event.get("metadata", {}), dict)):
        return None
    return event


def anon_key(record: dict) -> str:
    """What identifies a message given without an id until the graph names it: its record."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


# reference (h.2): the program's own user messages carry their kind as the source. The kind is
# the internal flag of memory/context/rounds.py (read here by its key: the ledger imports no context).
INTERNAL_KEY = "paicli_internal"
INTERNAL_SOURCES = frozenset({"skill_injection", "runaway_reminder", "image_tool_result", "budget_finalization",
                              "lsp_diagnostics"})


def message_event(record: dict, lc: dict | None = None) -> tuple[str, str]:
    """(event, source) for a message record: the classification of reference h.2."""
    role = record["role"]
    if role == "assistant":
        return ("tool_call" if record["toolCalls"] else "assistant"), "llm_response"
    kind = ((lc or {}).get("additional_kwargs") or {}).get(INTERNAL_KEY) if role == "user" else None
    if kind in INTERNAL_SOURCES:
        return "user", kind
    return {"system": ("system", "system_prompt"), "user": ("user", "user_input"),
            "tool": ("tool_result", "tool_execution")}.get(role, ("message", "graph_state"))


# -- messages ⇄ records -------------------------------------------------------------------------
def message_to_record(message: BaseMessage, serde: Any) -> tuple[dict, dict]:
    """(record, lc) for ``message``; ``record_to_message(record, lc)`` gives it back exactly."""
    if isinstance(message, RemoveMessage):
        raise ValueError("RemoveMessage is an instruction to the reducer; it is never stored")
    record = _record(message)
    lc = _lc_fields(message, record)
    if lc is None or _rebuilt(record, lc, serde) != message:
        lc = {"id": message.id, "$typed": encode_typed(message, serde)["$typed"]}
    return record, lc


def record_to_message(record: dict, lc: dict, serde: Any) -> BaseMessage:
    if "$typed" in lc:
        return decode_typed(lc["$typed"], serde)
    fields = dict(lc)
    cls = _CLASSES[fields.pop("type", None) or _TYPE_OF_ROLE[record["role"]]]
    if "content" not in fields:
        parts = record["contentParts"]
        fields["content"] = record["content"] if parts is None else _content_from_parts(parts)
    if record["reasoningContent"] is not None:
        fields["additional_kwargs"] = {**fields.get("additional_kwargs", {}),
                                       "reasoning_content": record["reasoningContent"]}
    if "role" in cls.model_fields:
        fields["role"] = record["role"]
    if "tool_call_id" in cls.model_fields:
        fields["tool_call_id"] = record["toolCallId"]
    if "tool_calls" in cls.model_fields:
        fields["tool_calls"] = _calls_from_record(record, len(fields.get("invalid_tool_calls", ())))
    return cls(**fields)


def _rebuilt(record: dict, lc: dict, serde: Any) -> BaseMessage | None:
    try:
        return record_to_message(record, lc, serde)
    except Exception:  # anything that does not rebuild is stored whole instead
        return None


def _record(message: BaseMessage) -> dict:
    content = message.content
    text, parts = (content, None) if isinstance(content, str) else _parts(content)
    reasoning = message.additional_kwargs.get("reasoning_content")
    return {"role": _role(message), "content": text,
            "reasoningContent": reasoning if isinstance(reasoning, str) else None,
            "toolCalls": _record_calls(message), "toolCallId": getattr(message, "tool_call_id", None),
            "contentParts": parts}


def _role(message: BaseMessage) -> str:
    for cls, role in _ROLES:
        if isinstance(message, cls):
            return role or message.role
    return message.type


def _record_calls(message: BaseMessage) -> list[dict] | None:
    if not isinstance(message, AIMessage):
        return None
    calls = [(c.get("id"), c.get("name"), json.dumps(c.get("args"), ensure_ascii=False, default=str))
             for c in message.tool_calls]
    calls += [(c.get("id"), c.get("name"), c.get("args") or "") for c in message.invalid_tool_calls]
    return [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls] or None


def _calls_from_record(record: dict, invalid: int) -> list[dict]:
    calls = record["toolCalls"] or []
    return [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]),
             "id": c["id"], "type": "tool_call"} for c in calls[:len(calls) - invalid]]


def _lc_fields(message: BaseMessage, record: dict) -> dict | None:
    """Fields the record does not hold and that differ from their defaults; None if not JSON."""
    lc: dict[str, Any] = {}
    if message.type != _TYPE_OF_ROLE.get(record["role"]):
        lc["type"] = message.type
    for name, default in _defaults(type(message)):
        value = getattr(message, name)
        if name == "additional_kwargs" and record["reasoningContent"] is not None:
            value = {k: v for k, v in value.items() if k != "reasoning_content"}
        if value != default:
            lc[name] = value
    if record["contentParts"] is not None and _content_from_parts(record["contentParts"]) != message.content:
        lc["content"] = message.content
    return lc if is_plain(lc, tags=False) else None  # lc is read as is, never untagged


@functools.cache
def _defaults(cls: type[BaseMessage]) -> tuple[tuple[str, Any], ...]:
    """(field, default) of the fields a record does not hold, per message class. pydantic looks
    at a default factory's signature on every ``get_default``, which made this a third of a
    ledger write. The defaults are only compared with, never handed out, so sharing them is safe."""
    return tuple((name, info.get_default(call_default_factory=True))
                 for name, info in cls.model_fields.items() if name not in _IN_RECORD)


def _parts(blocks: list) -> tuple[str, list[dict]]:
    parts = [p for p in map(_part, blocks) if p is not None]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    images = len(parts) - len(texts)
    return "\n\n".join(texts + ([_IMAGES_NOTE.format(images)] if images else [])), parts


def _part(block: Any) -> dict | None:
    """A PaiCLI ContentPart for a LangChain content block (text and images; others are skipped)."""
    if isinstance(block, str):
        return _content_part("text", text=block)
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return _content_part("text", text=str(block.get("text", "")))
    if kind == "image_url":
        url = block.get("image_url")
        return _image_part(url.get("url") if isinstance(url, dict) else url)
    if kind == "image":
        if block.get("base64"):
            return _content_part("image_base64", imageBase64=block["base64"],
                                 mimeType=block.get("mime_type") or _DEFAULT_MIME)
        return _image_part(block.get("url"))
    return None


def _image_part(url: Any) -> dict:
    url = str(url or "")
    head, sep, data = url.partition(";base64,")
    if url.startswith("data:") and sep:
        return _content_part("image_base64", imageBase64=data, mimeType=head[5:] or _DEFAULT_MIME)
    return _content_part("image_url", imageUrl=url)


def _content_part(kind: str, **fields: Any) -> dict:
    return {"type": kind, "text": None, "imageBase64": None, "imageUrl": None, "mimeType": None, **fields}


def _content_from_parts(parts: list[dict]) -> list:
    """The LangChain content a record's parts stand for (the canonical block forms)."""
    def block(p: dict) -> dict:
        if p["type"] == "text":
            return {"type": "text", "text": p["text"]}
        url = p["imageUrl"] if p["type"] == "image_url" else f"data:{p['mimeType']};base64,{p['imageBase64']}"
        return {"type": "image_url", "image_url": {"url": url}}
    return [block(p) for p in parts]


# -- values -------------------------------------------------------------------------------------
def is_plain(value: Any, tags: bool = True) -> bool:
    """True when JSON gives ``value`` back exactly (same types, no NaN, str keys) and, with
    ``tags``, no dict could be taken for a tag."""
    t = type(value)
    if value is None or t is str or t is bool or t is int:
        return True
    if t is float:
        return math.isfinite(value)
    if t is list:
        return all(is_plain(v, tags) for v in value)
    if t is dict:
        return (not (tags and _looks_tagged(value)) and all(type(k) is str for k in value)
                and all(is_plain(v, tags) for v in value.values()))
    return False


def _looks_tagged(d: dict) -> bool:
    return len(d) == 1 and next(iter(d)).startswith("$")


def is_mapping(encoded: Any) -> bool:
    """True when an encoded value is a plain JSON object (what ``diff_map`` works on)."""
    return type(encoded) is dict and not _looks_tagged(encoded)


def encode_value(value: Any, serde: Any, message_ref: Callable[[BaseMessage], dict],
                 text_ref: Callable[[dict], dict | None] | None = None) -> Any:
    """``value`` as JSON: plain parts as they are, messages as ``message_ref`` says, the rest typed.
    ``text_ref``: what stands for the content of a message given as a dict (None: the content)."""
    t = type(value)
    if value is None or t is str or t is bool or t is int or (t is float and math.isfinite(value)):
        return value
    if isinstance(value, BaseMessage) and not isinstance(value, RemoveMessage):
        return message_ref(value)
    if t is list:
        return [encode_value(v, serde, message_ref, text_ref) for v in value]
    if t is dict and all(type(k) is str for k in value):
        out = {k: encode_value(v, serde, message_ref, text_ref) for k, v in value.items()}
        if text_ref is not None and is_message_dict(value) and (ref := text_ref(value)) is not None:
            out["content"] = ref
        return {"$dict": out} if _looks_tagged(out) else out
    return encode_typed(value, serde)


def is_message_dict(value: dict) -> bool:
    """A dict LangChain would take for a message (``convert_to_messages``) with text content."""
    return type(value.get("content")) is str and ("role" in value or "type" in value)


def decode_value(value: Any, serde: Any, message_at: Callable[[int], BaseMessage | None],
                 refs: dict[str, Callable[[int], Any]] | None = None) -> Any:
    """``refs``: how the ``$anon`` and ``$text`` tags resolve (the thread's index)."""
    if type(value) is list:
        return [decode_value(v, serde, message_at, refs) for v in value]
    if type(value) is not dict:
        return value
    if len(value) == 1:
        tag, inner = next(iter(value.items()))
        if tag == "$msg":
            return message_at(inner)
        if refs is not None and tag in refs:
            return refs[tag](inner)
        if tag == "$message":
            return record_to_message(inner[0], inner[1], serde)
        if tag == "$typed":
            return decode_typed(inner, serde)
        if tag == "$dict":
            value = inner
    return {k: decode_value(v, serde, message_at, refs) for k, v in value.items()}


def encode_typed(value: Any, serde: Any) -> dict:
    kind, data = serde.dumps_typed(value)
    return {"$typed": [kind, base64.b64encode(data).decode("ascii")]}


def decode_typed(typed: list, serde: Any) -> Any:
    return serde.loads_typed((typed[0], base64.b64decode(typed[1])))
