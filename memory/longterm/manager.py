"""Long-term memory as the application uses it: PaiCLI's MemoryManager over the shared file.

One object per memory file and process. Every write runs on the freshest file contents under
the file's two-level lock (``MemoryFile.mutate``); reads reuse the parsed entries until the file
changes on disk. The store (``memory/longterm/store.py``), the ``save_memory`` tool, ``/save``, ``/memory``
and fact extraction all go through here, so the reference's write rules (j.4) hold everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from paicli.memory.longterm.config import MemoryOptions
from paicli.memory.longterm.enrichment import Enricher, set_search_terms
from paicli.memory.longterm.entry import (OWNER_KEY, SCOPE_GLOBAL, SOURCE_FILES_KEY, Entry, is_visible_in_project,
                                   new_fact, owner_of)
from paicli.memory.longterm.file import FILE_NAME, TERMS_FILE_NAME, MemoryFile
from paicli.memory.longterm.writes import delete, mark_verified, write_automatic_all, write_explicit
from paicli.memory.longterm.write_result import MemoryWriteResult, WriteStatus

MAX_EXTERNAL_SOURCES = 8  # reference (o.1)
SEARCH_LIMIT = 20  # reference (u.2): /memory search shows at most 20
RECENT_LIMIT = 5  # /memory search without a match shows this many recently verified entries
LAZY_PER_TURN = 3  # older entries sent for search terms per context block, within the session's bound
T = TypeVar("T")


class EntrySource(Protocol):
    """Where the entries live: ``MemoryFile`` (the JSON file) or ``StoreEntries`` (a LangGraph store)."""

    def read(self) -> list[Entry]: ...

    def mutate(self, fn: Callable[[list[Entry]], T]) -> T: ...


class LongTermMemory:
    def __init__(self, directory: str | os.PathLike[str] | None, options: MemoryOptions = MemoryOptions(), *,
                 entries: EntrySource | None = None) -> None:
        """``directory``: where ``long_term_memory.json`` lives. ``entries``: where the entries live
        instead (``paicli.memory.longterm.store_entries.StoreEntries`` over a LangGraph store); then
        ``directory`` may be None."""
        self.directory = Path(directory) if directory is not None else None
        self.options = options
        if entries is None:
            if self.directory is None:
                raise ValueError("LongTermMemory needs a directory or an entry source")
            entries = MemoryFile(self.directory / FILE_NAME, sync=options.sync)
        self.file: EntrySource = entries
        self._retriever: Any = None
        # Proposes search terms after a write (paicli.memory.longterm.enrichment); paicli attaches one
        # when a session has a model. None: entries are written without them.
        self.enricher: Enricher | None = None

    @property
    def retriever(self) -> Any:
        """``paicli.memory.longterm.retriever.Retriever``, imported on first use: jieba and numpy take a
        noticeable part of a second, and a session without memories never needs them."""
        if self._retriever is None:
            from paicli.memory.longterm.retriever import Retriever

            self._retriever = Retriever(self.options.cache_dir, terms_file=self._terms_file())
        return self._retriever

    def _terms_file(self) -> Any:
        """The retriever's term arrays beside the memory file (``paicli.memory.longterm.term_cache``);
        None over a store."""
        if not isinstance(self.file, MemoryFile):
            return None
        from paicli.memory.longterm.term_cache import TermFile

        return TermFile(self.file.path.with_name(TERMS_FILE_NAME), self.file.side_lock)

    def _forget_terms(self) -> None:
        """Inside a delete or a clear (the memory file's locks held): the term cache goes too, so
        nothing of a removed memory stays behind on disk; the next search writes it again."""
        if not isinstance(self.file, MemoryFile):
            return
        try:
            self.file.path.with_name(TERMS_FILE_NAME).unlink(missing_ok=True)
        except OSError:  # a cache: the next search rewrites it (or goes on without it)
            pass
        if self._retriever is not None:
            self._retriever.forget_saved()

    @property
    def owner(self) -> str | None:
        """Issue 35: the user whose global memories these are (a database), or None (the file:
        global memories are everyone's who uses it)."""
        return getattr(self.file, "owner", None)

    # -- reads -------------------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        return self.file.read()

    def visible(self, project_key: str | None) -> list[Entry]:
        """reference (j.1): global entries plus this project's, in file order."""
        return [e for e in self.file.read() if is_visible_in_project(e, project_key)]

    def search(self, query: str, project_key: str | None, limit: int = SEARCH_LIMIT,
               now: datetime | None = None) -> list[Any]:
        """``paicli.memory.longterm.retriever.Scored`` items, best first."""
        return self.retriever.rank(self.file.read(), query, project_key, now, limit)

    def recently_verified(self, project_key: str | None, limit: int = RECENT_LIMIT) -> list[Entry]:
        """What ``/memory search`` shows when nothing matches: the latest confirmed first."""
        entries = self.visible(project_key)
        return sorted(entries, key=lambda e: e.last_verified_at or e.timestamp, reverse=True)[:limit]

    def context_block(self, query: str, max_tokens: int, project_key: str | None,
                      now: datetime | None = None, shown: Collection[str] = frozenset()) -> str:
        """reference (p.4): the ``## 相关长期记忆`` block for the turn, or "". ``shown``: memory
        lines the visible conversation already carries; they are not repeated."""
        if max_tokens <= 0 or not query.strip() or not self.file.read():
            return ""
        if self.enricher is not None and self.enricher.lazy_left > 0:  # older entries, a few per turn
            self.enricher.submit_missing(self.visible(project_key), self._store_terms, LAZY_PER_TURN)
        return self.retriever.build_context(self.file.read(), query, max_tokens, project_key, now,
                                            self.options.stale_days, shown=shown)

    # -- writes ------------------------------------------------------------------------------------
    def save_fact(self, content: str, *, scope: str, project_key: str | None,
                  replace_id: str | None = None, allow_conflict: bool = False,
                  external_sources: Sequence[str] = (), source_files: Sequence[str] = (),
                  now: datetime | None = None) -> MemoryWriteResult:
        """reference (j.4 storeFact): ``/save``, ``/memory replace`` and ``save_memory``.
        ``source_files``: project files the fact came with (Q13 staleness)."""
        extra = {SOURCE_FILES_KEY: ",".join(source_files)} if source_files else {}
        if self.owner and scope.lower() == SCOPE_GLOBAL:  # issue 35: the writer's own
            extra[OWNER_KEY] = self.owner
        if external_sources:  # reference (o.1): tagged even when the guard is off
            extra |= {"external_context": "true",
                      "external_context_sources": ",".join(list(external_sources)[:MAX_EXTERNAL_SOURCES])}
        entry = new_fact(content.strip(), scope=scope, project=project_key, now=now, extra=extra)
        result = self.file.mutate(lambda entries: write_explicit(
            entries, entry, replace_id=replace_id, allow_conflict=allow_conflict,
            project_key=project_key, threshold=self.options.conflict_threshold, index=self.file.write_index()))
        if result.status in (WriteStatus.STORED, WriteStatus.REPLACED):
            self.enrich(result.entry)
        return result

    def replace_fact(self, old_id: str, content: str, project_key: str | None) -> MemoryWriteResult:
        """reference (j.4 replaceFact): the old entry's scope; other conflicts still block it."""
        old = next((e for e in self.visible(project_key) if e.id == old_id), None)
        scope = old.scope if old is not None else "project"
        return self.save_fact(content, scope=scope, project_key=project_key, replace_id=old_id)

    def save_automatic(self, entries: Sequence[Entry]) -> list[Entry]:
        """reference (j.4.3, n.5): the entries actually written; duplicates and conflicts skipped."""
        threshold = self.options.conflict_threshold
        written = self.file.mutate(lambda current: write_automatic_all(
            current, entries, threshold, self.file.write_index())) if entries else []
        for entry in written:
            self.enrich(entry)
        return written

    def verify(self, entry_id: str, project_key: str | None, now: datetime | None = None) -> Entry | None:
        """``/memory verify``: the user's confirmation (the model has no tool for it, reference m)."""
        if not any(e.id == entry_id for e in self.visible(project_key)):
            return None
        when = now or datetime.now(UTC)
        verified = self.file.mutate(lambda entries: mark_verified(entries, entry_id, when))
        if verified is not None:  # the user looked at it again: its search terms are refreshed too
            self.enrich(verified)
        return verified

    # -- search terms (issue 16) -------------------------------------------------------------------
    def enrich(self, entry: Entry) -> bool:
        """Ask for ``entry``'s search terms in the background; never waits for them."""
        return self.enricher is not None and self.enricher.submit(entry, self._store_terms)

    def _store_terms(self, entry_id: str, content: str, terms: list[str]) -> None:
        self.file.mutate(lambda entries: set_search_terms(entries, entry_id, content, terms))

    def delete(self, entry_id: str, project_key: str | None) -> Entry | None:
        def remove(entries: list[Entry]) -> Entry | None:
            gone = delete(entries, entry_id, project_key)
            if gone is not None:
                self._forget_terms()
            return gone

        return self.file.mutate(remove)

    def clearable(self, project_key: str | None, include_global: bool = False) -> list[Entry]:
        """What ``/memory clear`` removes (issue 35): this project's memories, and with
        ``include_global`` the global ones it sees too; never another project's."""
        return [e for e in self.visible(project_key) if include_global or e.scope != SCOPE_GLOBAL]

    def clear(self, shown: Sequence[Entry]) -> list[Entry]:
        """Remove the entries of ``shown`` (``clearable``'s answer, as the user confirmed it) that
        are still there; what was written meanwhile, or lies outside what was shown, stays.
        Returns the entries removed."""
        doomed = {_where(e) for e in shown}

        def remove(entries: list[Entry]) -> list[Entry]:
            gone = [e for e in entries if _where(e) in doomed]
            if gone:
                entries[:] = [e for e in entries if _where(e) not in doomed]
                self._forget_terms()
            return gone

        return self.file.mutate(remove)


def _where(entry: Entry) -> tuple[str, str, str | None, str | None]:
    """An entry's id and the namespace it lives in (scope, project, owner): what ``clear`` matches."""
    return (entry.id, entry.scope, entry.project if entry.scope != SCOPE_GLOBAL else None, owner_of(entry))
