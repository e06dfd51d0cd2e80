"""A project's index as the tools and the commands use it: build, refresh, search, status, clear.

``CodeIndexes`` (one per session, under one ``$PAICLI_HOME``) hands out a ``ProjectIndex`` per
project root. Its index follows the files: before a search, the files an edit of this turn
touched are re-read, and the whole project is checked (a walk comparing sizes and times; only
changed files are read) when it has at most ``FULL_CHECK_FILES`` files or the last check is
older than ``FULL_CHECK_EVERY`` seconds. A search never waits for another process's update:
it searches what is there.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from paicli.codeindex.indexer import Progress, Report, update
from paicli.codeindex.options import CodeIndexOptions
from paicli.codeindex.search import Result, search
from paicli.codeindex.store import Busy, Damaged, Store, index_dir
from paicli.codeindex.vectors import Embedder, EmbeddingError, Vectors, embed_missing
from paicli.codeindex.walk import walk

FULL_CHECK_FILES = 5_000
FULL_CHECK_EVERY = 60.0
LEXICAL_NOTE = "（未配置向量检索，仅按关键词 BM25 检索；设置 PAICLI_EMBEDDING_URL 和 PAICLI_EMBEDDING_MODEL 可启用混合检索）"


@dataclass(frozen=True)
class Status:
    files: int
    symbols: int
    chunks: int
    vectors: int
    bytes: int
    updated: float | None
    complete: bool
    languages: Counter[str]
    vector_model: str


class CodeIndexes:
    def __init__(self, home: Path, options: CodeIndexOptions = CodeIndexOptions()):
        self.home, self.options = home, options
        self.vectors = Vectors(Embedder(options.embedding)) if options.embedding.enabled else None
        self._projects: dict[str, ProjectIndex] = {}
        self._lock = threading.Lock()

    def project(self, root: Path, key: str) -> ProjectIndex:
        """``key``: the project key the index is filed under (memory's, see ``index_dir``)."""
        with self._lock:
            if key not in self._projects:
                self._projects[key] = ProjectIndex(Store(index_dir(self.home, key)), Path(root), self)
            return self._projects[key]


class ProjectIndex:
    def __init__(self, store: Store, root: Path, owner: CodeIndexes):
        self.store, self.root, self.owner = store, root, owner
        self.options = owner.options
        self._checked = 0.0
        self._said_lexical = False
        self._lock = threading.RLock()  # updates from this process's threads, one at a time

    def indexed(self) -> bool:
        """Whether a complete update ever finished (a damaged index counts as none)."""
        if not self.store.exists():
            return False
        try:
            self.store.checked()
            return self.store.meta("complete") == "1" or self.store.meta("updated") != ""
        except Damaged:
            return False

    def too_big(self) -> bool:
        """More files than search_code indexes on its own (then it asks for /index)."""
        return walk(self.root, self.options.max_file_bytes, limit=self.options.auto_index_max_files).truncated

    def update(self, *, progress: Callable[[Progress], None] | None = None, cancel: threading.Event | None = None,
               only: Iterable[str] | None = None, wait: float | None = None, embed: bool = True,
               embed_progress: Callable[[int, int], None] | None = None, workers: int | None = None) -> Report:
        kwargs = {"wait": wait} if wait is not None else {}
        # The file lock keeps other processes out, not this one's threads (it is one lock object,
        # re-entrant across threads): two first-use tool calls at once take turns here.
        if not self._lock.acquire(timeout=-1 if wait is None else wait):
            raise Busy("另一个检索正在更新代码索引")
        try:
            report = update(self.store, self.root, max_file_bytes=self.options.max_file_bytes, only=only,
                            progress=progress, cancel=cancel, workers=workers, **kwargs)
        finally:
            self._lock.release()
        if only is None:
            self._checked = time.monotonic()
        if embed and self.owner.vectors is not None and not report.cancelled:
            self._embed(report, embed_progress, cancel)
        return report

    def _embed(self, report: Report, progress: Callable[[int, int], None] | None, cancel: threading.Event | None) -> None:
        with self.store.lock.acquire(timeout=60):
            try:
                report.embedded = embed_missing(self.store, self.root, self.owner.vectors.embedder,
                                                progress=progress, cancel=cancel)
            except EmbeddingError as error:
                report.problems.append(f"⚠️ 向量未能计算完（{error}），本次检索仍可按关键词进行")

    def refresh(self, touched: Iterable[str] = ()) -> None:
        """Before a search: what an edit touched, and the whole project when cheap or due."""
        try:
            files = self.store.checked().execute("SELECT count(*) FROM files").fetchone()[0]
        except Damaged:
            files = 0  # deleted: the full update below rebuilds it
        full = files <= FULL_CHECK_FILES or time.monotonic() - self._checked > FULL_CHECK_EVERY
        try:
            with self._lock:
                if full:
                    self.update(wait=0, embed=False)
                elif touched:
                    self.update(only=list(touched), wait=0, embed=False)
        except Busy:
            pass  # another process is updating it: search what is there

    def search(self, query: str, top_k: int) -> Result:
        self.store.checked()
        return search(self.store, query, top_k, self.owner.vectors)

    def lexical_note(self, result: Result) -> str:
        """The one line that says vectors are off, the first time only."""
        if result.mode != "lexical" or self._said_lexical:
            return ""
        self._said_lexical = True
        if self.owner.vectors is None:
            return LEXICAL_NOTE
        return "（向量尚未计算，本次按关键词检索；运行 /index 计算向量）"

    def status(self) -> Status | None:
        if not self.store.exists():
            return None
        conn = self.store.checked()
        count = lambda table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: E731
        updated = self.store.meta("updated")
        languages = Counter(dict(conn.execute("SELECT coalesce(language, 'text'), count(*) FROM files GROUP BY 1")))
        return Status(count("files"), count("symbols"), count("chunks"), count("vectors"), self.store.size_bytes(),
                      float(updated) if updated else None, self.store.meta("complete") == "1", languages,
                      self.store.meta("vector_model"))

    def clear(self) -> bool:
        """Delete the index; False when there was none."""
        existed = self.store.exists()
        with self.store.lock.acquire(timeout=60):
            self.store.discard()
        self._checked = 0.0
        return existed
