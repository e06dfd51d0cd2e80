"""Search terms for a memory, proposed by the light model after it is written (issue 16).

A memory says "项目使用 PostgreSQL 15 作为主数据库"; the user later asks "which database does the
main service use". At write time the light model proposes other words for it (synonyms, the
other language); they are kept in the entry's metadata under ``search_terms`` (an extra field:
PaiCLI ignores it, paicli's rewrite keeps it) and the retriever matches them at a lower weight
than the content (``paicli.memory.longterm.lexical.ENRICHED_WEIGHT``).

The call never delays an answer: ``Enricher`` runs it on one daemon thread of its own and
drops work when its queue is full. A failed or unreadable reply leaves the entry as it was.
The model call is a callable handed in (``propose(content) -> reply text``; ``model_proposer``
makes one from a chat model and the prompt text paicli loads from ``prompts/memory/``), so this
layer neither picks the model nor reads prompt files (``paicli/run/session.py`` wires it).
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from paicli.memory.longterm.entry import Entry

log = logging.getLogger(__name__)

SEARCH_TERMS_KEY = "search_terms"
SEPARATOR = " | "
MAX_TERMS, MAX_TERM_CHARS = 24, 40
LAZY_PER_SESSION = 20  # older entries without terms enriched per process, at most
QUEUE_SIZE = 64
IDLE_EXIT = 2.0  # seconds the worker waits for another job before its thread ends
CONTROL = re.compile(r"[\x00-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")

Propose = Callable[[str], str]
Store = Callable[[str, str, list[str]], None]  # (entry id, the content the terms are for, terms)


def model_proposer(model: Any, system_prompt: str) -> Propose:
    """``propose`` over a LangChain chat model: the memory is the user message, as data."""
    def propose(content: str) -> str:
        reply = model.invoke([SystemMessage(system_prompt), HumanMessage(content)])
        return reply.content if isinstance(reply.content, str) else ""

    return propose


def search_terms(entry: Entry) -> list[str]:
    value = entry.metadata.get(SEARCH_TERMS_KEY, "")
    return [t.strip() for t in value.split("|") if t.strip()]


def parse_terms(reply: str | None, content: str = "") -> list[str]:
    """The terms of a reply: a JSON list, or an object with a ``terms`` list; anything else is
    nothing. Each term is cleaned (no control characters, no ``|``), short, new and unique."""
    try:
        data = json.loads((reply or "").strip().removeprefix("```json").removesuffix("```").strip())
    except ValueError:
        return []
    items = data.get("terms") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    out: dict[str, None] = {}
    for item in items:
        term = " ".join(CONTROL.sub(" ", item).replace("|", " ").split()) if isinstance(item, str) else ""
        if term and len(term) <= MAX_TERM_CHARS and term.lower() not in content.lower():
            out.setdefault(term, None)
    return list(out)[:MAX_TERMS]


def with_search_terms(entry: Entry, terms: Iterable[str]) -> Entry:
    """The entry with ``terms`` in its metadata, and in the JSON object it is written as."""
    value = SEPARATOR.join(terms)
    raw = entry.raw
    if raw is not None:
        raw = dict(raw)
        meta = raw.get("metadata")
        raw["metadata"] = {**(meta if isinstance(meta, dict) else {}), SEARCH_TERMS_KEY: value}
    return replace(entry, metadata={**entry.metadata, SEARCH_TERMS_KEY: value}, raw=raw)


def set_search_terms(entries: list[Entry], entry_id: str, content: str, terms: list[str]) -> Entry | None:
    """Inside ``MemoryFile.mutate``: only the same entry with the same content (it may have been
    replaced or deleted while the model thought)."""
    for i, entry in enumerate(entries):
        if entry.id == entry_id and entry.content == content:
            entries[i] = with_search_terms(entry, terms)
            return entries[i]
    return None


class Enricher:
    """One background thread asking ``propose`` for the terms of each submitted memory."""

    def __init__(self, propose: Propose, lazy_limit: int = LAZY_PER_SESSION, idle_exit: float = IDLE_EXIT) -> None:
        self._propose = propose
        self._idle_exit = idle_exit
        self._jobs: queue.Queue[tuple[str, str, Store]] = queue.Queue(QUEUE_SIZE)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.lazy_left = lazy_limit
        self._tried: set[str] = set()

    def submit(self, entry: Entry, store: Store) -> bool:
        """Queue one memory; False when the queue is full (the entry stays as it is)."""
        self._tried.add(entry.id)
        try:
            self._jobs.put_nowait((entry.id, entry.content, store))
        except queue.Full:
            return False
        self._start()
        return True

    def submit_missing(self, entries: Iterable[Entry], store: Store, at_most: int) -> int:
        """Older memories without terms, not tried yet in this process, within the lazy budget."""
        sent = 0
        for entry in entries:
            if sent >= min(at_most, self.lazy_left):
                break
            if entry.id not in self._tried and not search_terms(entry) and self.submit(entry, store):
                sent += 1
        self.lazy_left -= sent
        return sent

    @property
    def pending(self) -> int:
        return self._jobs.unfinished_tasks

    def wait_idle(self, timeout: float) -> bool:
        """For tests and a clean exit: True when every queued job has finished."""
        done = threading.Event()
        threading.Thread(target=lambda: (self._jobs.join(), done.set()), daemon=True).start()
        return done.wait(timeout)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="paicli-enrich", daemon=True)
                self._thread.start()

    def _next_job(self) -> tuple[str, str, Store] | None:
        """The next job, or None once the queue has stayed empty for ``idle_exit`` seconds: the worker then
        ends rather than block for the rest of the process (one thread per session would pile up
        in a process that outlives its sessions); ``submit`` starts a new one."""
        while True:
            try:
                return self._jobs.get(timeout=self._idle_exit)
            except queue.Empty:
                with self._lock:  # a job put after this check finds no worker and starts one
                    if self._jobs.empty():
                        self._thread = None
                        return None

    def _run(self) -> None:
        while (job := self._next_job()) is not None:
            entry_id, content, store = job
            try:
                terms = parse_terms(self._propose(content), content)
                if terms:
                    store(entry_id, content, terms)
            except Exception as error:  # noqa: BLE001 - a failed enrichment only loses the terms
                log.info("search terms for %s not saved: %s", entry_id, error)
            finally:
                self._jobs.task_done()
