"""Building and updating a project's index: only what changed is read again.

``update`` walks the project (``paicli.codeindex.walk``), compares each file's size and modification
time with the index, reads and hashes the ones that differ, parses those whose content changed
(``paicli.codeindex.worker``: in this process, or in a pool of worker processes when many files wait),
drops the files that are gone, and writes each batch of files in one transaction. It holds the
index lock throughout (``paicli.codeindex.store``), so a second process waits for it and then finds
nothing left to do.

Progress goes to ``progress`` (at most twice a second): files done, total, rate, time left.
``cancel`` (a ``threading.Event``) stops it between files; what was written stays consistent and
the rest is picked up by the next update. Vectors, when an embedder is given, are computed after
the text index is complete (``paicli.codeindex.vectors``).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import Timeout

from paicli.codeindex.languages import GRAMMARS, Grammar
from paicli.codeindex.store import LOCK_WAIT, Busy, Damaged, Store
from paicli.codeindex.options import DEFAULT_MAX_FILE_BYTES
from paicli.codeindex.walk import Found, admitted, walk
from paicli.codeindex.words import path_text
from paicli.codeindex.worker import Examined, Job, examine

PARALLEL_FROM = 200  # files to parse before a worker pool pays for its start-up
BATCH = 64  # files per worker task and per transaction
PROGRESS_EVERY = 0.5  # seconds
CHECKPOINT_AFTER = 200  # files written


@dataclass(frozen=True)
class Progress:
    phase: str  # "files" | "vectors"
    done: int
    total: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0

    @property
    def left(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass
class Report:
    files: int = 0  # indexed files after the update
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)  # one line each (a grammar that failed, a rebuild)
    cancelled: bool = False
    truncated: bool = False
    seconds: float = 0.0
    embedded: int = 0

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed


@dataclass
class Plan:
    """What an update has to do: the files to read, the ids of the files that are gone."""

    jobs: list[Job]
    removed: list[int]


def update(store: Store, root: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, only: Iterable[str] | None = None,
           progress: Callable[[Progress], None] | None = None, cancel: threading.Event | None = None,
           workers: int | None = None, grammars: tuple[Grammar, ...] = GRAMMARS, wait: float = LOCK_WAIT,
           limit: int | None = None) -> Report:
    """Bring the index up to date with ``root``. ``only``: just these project-relative paths (the
    files an edit touched). ``workers``: pool size (default: the cores, at most 4); 1 parses here.
    ``wait``: seconds to wait for another process's update (0: give up at once, ``Busy``)."""
    started, report = time.monotonic(), Report()
    only = list(only) if only is not None else None
    try:
        store.lock.acquire(timeout=wait)
    except Timeout:
        raise Busy("另一个 paicli 进程正在更新代码索引") from None
    try:
        conn = _connection(store, report)
        root = Path(os.path.realpath(root))
        found = _found(root, only, max_file_bytes, limit, report)
        plan = _plan(conn, root, found, set(only) if only is not None else None, max_file_bytes, report)
        _write_all(store, conn, plan, report, _examined(plan.jobs, workers, grammars, cancel), progress, started)
        _finish(store, conn, root, report)
    finally:
        store.lock.release()
    report.seconds = time.monotonic() - started
    return report


def _connection(store: Store, report: Report) -> Any:
    try:
        return store.checked()
    except Damaged as damaged:
        report.problems.append(str(damaged))
        return store.checked()


def _found(root: Path, only: Iterable[str] | None, max_bytes: int, limit: int | None, report: Report) -> list[Found]:
    if only is None:
        walked = walk(root, max_bytes, limit)
        report.skipped.update(walked.skipped)
        report.truncated = walked.truncated
        return walked.files
    # A named file the walk would not index (gone, ignored, behind a link) is left out: _plan
    # drops it from the index if it was there.
    return [f for f in (admitted(root, rel, max_bytes) for rel in dict.fromkeys(only)) if f is not None]


def _plan(conn: Any, root: Path, found: list[Found], named: set[str] | None, max_bytes: int, report: Report) -> Plan:
    """``named``: the paths an ``only`` update was given (one of them that is gone is dropped)."""
    known = {path: (fid, size, mtime, digest) for fid, path, size, mtime, digest
             in conn.execute("SELECT id, path, size, mtime_ns, hash FROM files")}
    jobs = []
    for f in found:
        old = known.get(f.rel)
        if old is not None and old[1] == f.size and old[2] == f.mtime_ns:
            report.unchanged += 1
            continue
        jobs.append(Job(f.rel, str(root / f.rel), old[3] if old else None, max_bytes))
    seen = {f.rel for f in found}
    gone = [p for p in known if p not in seen and (named is None or p in named)]
    return Plan(jobs, [known[p][0] for p in gone])


def _examined(jobs: list[Job], workers: int | None, grammars: tuple[Grammar, ...],
              cancel: threading.Event | None) -> Iterator[list[Examined]]:
    """Batches of examined files, in order, from this process or a pool."""
    count = workers if workers is not None else min(4, os.cpu_count() or 1)
    batches = [jobs[i : i + BATCH] for i in range(0, len(jobs), BATCH)]
    if count <= 1 or len(jobs) < PARALLEL_FROM or grammars is not GRAMMARS:
        for batch in batches:
            if cancel is not None and cancel.is_set():
                return
            yield [examine(job, grammars) for job in batch]
        return
    yield from _pooled(batches, count, cancel)


def _pooled(batches: list[list[Job]], count: int, cancel: threading.Event | None) -> Iterator[list[Examined]]:
    from paicli.codeindex.pool import Pool

    pool = Pool(count)
    try:
        yield from pool.map(batches, cancel.is_set if cancel is not None else None)
    finally:
        pool.close()


def _write_all(store: Store, conn: Any, plan: Plan, report: Report, batches: Iterator[list[Examined]],
               progress: Callable[[Progress], None] | None, started: float) -> None:
    ids = _next_ids(conn)
    total, done, shown = len(plan.jobs), 0, 0.0
    if plan.removed:
        conn.execute("BEGIN")
        for fid in plan.removed:
            _drop_rows(conn, fid)
            conn.execute("DELETE FROM files WHERE id = ?", (fid,))
        report.removed += len(plan.removed)
        store.bump(conn)
        conn.execute("COMMIT")
    known = {path: fid for fid, path in conn.execute("SELECT id, path FROM files")}
    try:
        for batch in batches:
            conn.execute("BEGIN")
            for item in batch:
                _write(conn, item, known, ids, report)
            store.bump(conn)
            conn.execute("COMMIT")
            done += len(batch)
            now = time.monotonic()
            if progress is not None and (now - shown >= PROGRESS_EVERY or done == total):
                shown = now
                progress(Progress("files", done, total, now - started))
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    report.cancelled = done < total


def _next_ids(conn: Any) -> dict[str, int]:
    return {table: (conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0) + 1
            for table in ("files", "symbols", "chunks")}


def _drop_rows(conn: Any, fid: int) -> None:
    conn.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (fid,))
    for table in ("chunks", "refs", "symbols"):
        conn.execute(f"DELETE FROM {table} WHERE file_id = ?", (fid,))


def _write(conn: Any, item: Examined, known: dict[str, int], ids: dict[str, int], report: Report) -> None:
    fid = known.get(item.rel)
    was_known = fid is not None
    if item.unchanged and was_known:
        conn.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (item.size, item.mtime_ns, fid))
        report.unchanged += 1
        return
    if fid is not None:
        _drop_rows(conn, fid)
        conn.execute("DELETE FROM files WHERE id = ?", (fid,))
        del known[item.rel]
    if item.skip is not None:
        report.skipped[item.skip] += 1
        report.removed += was_known
        return
    if item.problem and item.problem not in report.problems:
        report.problems.append(item.problem)
    fid = fid or _take(ids, "files")
    known[item.rel] = fid
    conn.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (fid, item.rel, item.language, item.size, item.mtime_ns, item.hash, item.lines))
    _write_facts(conn, fid, item, ids)
    report.changed += was_known
    report.added += not was_known


def _take(ids: dict[str, int], table: str, count: int = 1) -> int:
    first = ids[table]
    ids[table] += count
    return first


def _write_facts(conn: Any, fid: int, item: Examined, ids: dict[str, int]) -> None:
    base = _take(ids, "symbols", len(item.symbols))
    conn.executemany("INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (base + i, fid, s.kind, s.name, s.qualified, s.signature, s.doc, s.start_line, s.end_line,
         base + s.parent if s.parent >= 0 else None) for i, s in enumerate(item.symbols)])
    conn.executemany("INSERT INTO refs VALUES (?, ?, ?, ?, ?)", [
        (fid, base + r.symbol if r.symbol >= 0 else None, r.name, r.kind, r.line) for r in item.refs])
    first = _take(ids, "chunks", len(item.chunks))
    rows = [(first + i, fid, base + c.symbol if c.symbol >= 0 else None, c.start_line, c.end_line, item.hashes[i])
            for i, c in enumerate(item.chunks)]
    conn.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", rows)
    where = path_text(item.rel)
    conn.executemany("INSERT INTO chunks_fts (rowid, name, signature, doc, body, path) VALUES (?, ?, ?, ?, ?, ?)",
                     [(first + i, c.name, c.signature, c.doc, c.body, where) for i, c in enumerate(item.chunks)])


def _finish(store: Store, conn: Any, root: Path, report: Report) -> None:
    report.files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    conn.execute("BEGIN")
    store.set_meta(conn, "root", str(root))
    store.set_meta(conn, "updated", f"{time.time():.3f}")
    store.set_meta(conn, "complete", "0" if report.cancelled or report.truncated else "1")
    conn.execute("COMMIT")
    if report.touched >= CHECKPOINT_AFTER:  # fold a big update's WAL into the database now, not at the next edit
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
