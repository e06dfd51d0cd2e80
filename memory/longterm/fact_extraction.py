"""Post-task fact extraction (reference n): filter, ask a model for verbatim quotes, validate.

Only the user's own submitted text goes in (n.1). ``safe_input`` decides whether a call is made
at all; the model may only point at spans of that text (``{"facts":[{"quote": ...}]}``), and
``validate_quotes`` keeps the spans that pass every deterministic rule. The caller (the graph)
decides when to run this, writes with ``write_facts`` inside the memory file's lock, records the
usage and prints ``saved_notice``. Provider errors propagate: the caller logs them and moves on,
so a failed extraction never touches the answer (n.5).

The prompt texts live in ``prompts/extraction/*.md``; memory/ cannot import prompts/ (same
layer, see the import contract in pyproject.toml), so callers pass them in as ``ExtractionPrompts``
(``paicli.nodes.extract_facts.extraction_prompts`` loads them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from paicli.memory.longterm.fact_filters import java_trim, quote_rejection, safe_input
from paicli.memory.longterm.entry import (SCOPE_PROJECT, SOURCE_AUTO, VERIFICATION_KEY, VERIFICATION_UNVERIFIED, Entry,
                                 new_fact)
from paicli.memory.longterm.writes import write_automatic_all

__all__ = ["MAX_FACTS", "Extraction", "ExtractionPrompts", "Validation", "extract", "extract_quotes",
           "facts_to_entries", "safe_input", "saved_notice", "validate", "validate_quotes", "write_facts"]

MAX_FACTS = 3  # reference (n.2): more than three quotes voids the whole batch (n.4)
SAVED_NOTICE = "💾 自动提取并保存 {n} 条项目事实（待核实；可用 /memory list 查看和删除）。"  # reference (n.5)


@dataclass(frozen=True)
class ExtractionPrompts:
    """The rendered prompt pieces: the system text, and the user text for a safe input."""

    system: str
    user: Callable[[str], str]


@dataclass(frozen=True)
class Validation:
    """What the deterministic rules made of one reply."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (quote, reason)
    void: str | None = None  # why the whole batch was thrown away, if it was


@dataclass(frozen=True)
class Extraction:
    """One extraction attempt; ``called`` is False when the filters left nothing to send."""

    safe_input: str | None
    called: bool = False
    reply: str | None = None
    validation: Validation = Validation()
    usage: dict[str, Any] | None = None  # the reply's usage_metadata, for the token budget

    @property
    def quotes(self) -> list[str]:
        return self.validation.accepted


def validate(response_text: str | None, safe: str) -> Validation:
    """reference (n.4), with the reason for every rejection.

    The reply must be exactly one JSON object. A reply wrapped in a ```json fence, or followed
    by other text, does not parse and saves nothing: the reference saves nothing when the JSON
    does not parse, and a lenient reader would let chatty replies through (PaiCLI's Jackson
    reader ignores trailing text; we do not). A key repeated in one object voids the batch too.
    """
    if response_text is None:
        return Validation(void="no reply content")
    try:
        root = json.loads(response_text, object_pairs_hook=_no_repeated_keys)
    except ValueError:
        return Validation(void="reply is not a single JSON value")
    void = _batch_void(root)
    return Validation(void=void) if void else _judge([item["quote"] for item in root["facts"]], safe)


def _judge(quotes: list[str], safe: str) -> Validation:
    """reference (n.4): each trimmed quote on its own; the accepted ones de-duplicated in order."""
    accepted: list[str] = []
    rejected: list[tuple[str, str]] = []
    for quote in map(java_trim, quotes):
        reason = quote_rejection(quote, safe)
        if reason:
            rejected.append((quote, reason))
        elif quote not in accepted:
            accepted.append(quote)
    return Validation(accepted, rejected)


def validate_quotes(response_text: str | None, safe_input: str) -> list[str]:
    """reference (n.4): the quotes that may be saved, de-duplicated in reply order."""
    return validate(response_text, safe_input).accepted


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("repeated key")
    return dict(pairs)


def _batch_void(root: Any) -> str | None:
    """reference (n.4): any shape other than {"facts":[{"quote":"..."}, ...]} voids the batch."""
    if not isinstance(root, dict):
        return "reply is not a JSON object"
    if set(root) != {"facts"}:
        return "reply object has keys other than 'facts'" if "facts" in root else "reply has no 'facts'"
    facts = root["facts"]
    if not isinstance(facts, list):
        return "'facts' is not an array"
    if len(facts) > MAX_FACTS:
        return f"more than {MAX_FACTS} facts"
    if not all(isinstance(f, dict) and set(f) == {"quote"} and isinstance(f["quote"], str) for f in facts):
        return 'a fact is not exactly {"quote": "<text>"}'
    return None


def request_messages(prompts: ExtractionPrompts, safe: str) -> list[BaseMessage]:
    """reference (n.3): one system and one user message; no tools are offered."""
    return [SystemMessage(prompts.system), HumanMessage(prompts.user(safe))]


async def extract(model: BaseChatModel, text: str | None, prompts: ExtractionPrompts) -> Extraction:
    """reference (n.2-n.4) for the user's raw text; no model call when the filters say skip."""
    safe = safe_input(text)
    if safe is None:
        return Extraction(None)
    reply = await model.ainvoke(request_messages(prompts, safe))
    content = reply.text if reply.content is not None else None
    usage = dict(reply.usage_metadata) if getattr(reply, "usage_metadata", None) else None
    return Extraction(safe, True, content, validate(content, safe), usage)


async def extract_quotes(model: BaseChatModel, text: str | None, prompts: ExtractionPrompts) -> list[str]:
    """The verbatim quotes worth saving from ``text`` (an empty list when nothing is)."""
    return (await extract(model, text, prompts)).quotes


def facts_to_entries(quotes: Sequence[str], project_key: str, now: datetime) -> list[Entry]:
    """reference (n.5): project facts marked as auto-extracted and unverified (Q12 names)."""
    marks = {"source": SOURCE_AUTO, VERIFICATION_KEY: VERIFICATION_UNVERIFIED}
    return [new_fact(q, scope=SCOPE_PROJECT, project=project_key, now=now, extra=marks) for q in quotes]


def write_facts(entries: list[Entry], facts: Sequence[Entry]) -> list[Entry]:
    """reference (n.5): duplicates and conflicts are skipped silently. Returns the facts
    written. Run it inside ``MemoryFile.mutate`` (``LongTermMemory.save_automatic`` does)."""
    return write_automatic_all(entries, facts)


def saved_notice(n: int) -> str:
    return SAVED_NOTICE.format(n=n)
