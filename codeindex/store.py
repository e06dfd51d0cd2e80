"""The index on disk: one SQLite database per project, its schema, and what happens when it is bad.

``$PAICLI_HOME/codeindex/<folder name>-<hash of the project key>/index.sqlite``, in WAL mode, so
searches read while another process writes. Writers (an update, a rebuild, ``/index clear``)
hold ``index.lock`` (``filelock``) for as long as they write; a file's rows change in one
transaction, so a reader sees a file either before or after its update, and a killed or
cancelled update leaves every file it finished and nothing half-written.

Tables: ``files`` (path, language, size, mtime, content hash), ``symbols`` (kind, name, qualified
name, signature, doc, lines, parent), ``refs`` (the names each symbol uses), ``chunks`` (the rows
of the full-text index ``chunks_fts``: FTS5 with BM25, porter stemming, columns name, signature,
doc, body, path) and ``vectors`` (an embedding per distinct chunk text, by the text's hash, so a
file edit re-embeds only the chunks that changed). ``meta`` holds the generation (bumped by
every write, so a process's cached vectors know when they are stale) and the embedding model.

A database that does not open as one (``file is not a database``, ``malformed``) or carries a
schema version other than ``SCHEMA`` is deleted and rebuilt; ``Damaged`` carries the one line
that says so.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
from pathlib import Path

from filelock import FileLock

SCHEMA = 1
LOCK_WAIT = 120.0  # seconds a writer waits for another process's update before giving up
FTS_WEIGHTS = (10.0, 4.0, 3.0, 1.0, 2.0)  # name, signature, doc, body, path (bm25 column weights)

# IF NOT EXISTS: two processes (or threads) that both found the file empty both create it, and
# the second's creation, after the first's commit, changes nothing.
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, language TEXT, size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL, lines INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS symbols (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
                      qualified TEXT NOT NULL, signature TEXT NOT NULL, doc TEXT NOT NULL, start_line INTEGER NOT NULL,
                      end_line INTEGER NOT NULL, parent_id INTEGER);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols (name);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols (file_id);
CREATE TABLE IF NOT EXISTS refs (file_id INTEGER NOT NULL, symbol_id INTEGER, name TEXT NOT NULL, kind TEXT NOT NULL,
                   line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS refs_name ON refs (name);
CREATE INDEX IF NOT EXISTS refs_file ON refs (file_id);
CREATE INDEX IF NOT EXISTS refs_symbol ON refs (symbol_id);
CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, symbol_id INTEGER, start_line INTEGER NOT NULL,
                     end_line INTEGER NOT NULL, text_hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks (file_id);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks (text_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(name, signature, doc, body, path, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS vectors (text_hash TEXT PRIMARY KEY, vector BLOB NOT NULL);
"""


class Damaged(Exception):
    """The index was unusable and has been deleted; ``str()`` is the one line for a person."""


class Busy(Exception):
    """Another process holds the index lock past the wait."""


def index_dir(home: Path, project_key: str) -> Path:
    """Where a project's index lives: readable folder name plus a hash of the project key."""
    digest = hashlib.sha256(project_key.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_-]", "_", Path(project_key).name)[:40] or "root"
    return home / "codeindex" / f"{name}-{digest}"


class Store:
    """One project's database. Connections are per thread (search_code runs in parallel)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.path = directory / "index.sqlite"
        self.lock = FileLock(str(directory / "index.lock"), thread_local=False)
        self._local = threading.local()

    def exists(self) -> bool:
        return self.path.exists()

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 30000")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def checked(self) -> sqlite3.Connection:
        """A connection to a database of this schema (created when missing); a bad one is
        deleted and ``Damaged`` says why (the caller rebuilds)."""
        try:
            conn = self.connection()
            version, tables = self._seen(conn)
            if version == 0 and not tables:  # new: one creator at a time, across threads and processes
                with self.lock.acquire(timeout=LOCK_WAIT):
                    version, tables = self._seen(conn)
                    if version == 0 and not tables:
                        self._create(conn)
                        return conn
            if version == SCHEMA and "files" in tables:
                conn.execute("SELECT count(*) FROM meta").fetchone()
                return conn
            reason = (f"由更新版本的 paicli 写入（格式 {version}）" if version > SCHEMA
                      else f"格式过旧（格式 {version}）")
        except sqlite3.OperationalError as error:
            if "locked" in str(error):  # busy, not damaged: never delete an index another writer holds
                raise
            reason = f"已损坏（{error}）"
        except sqlite3.DatabaseError as error:  # not a database, malformed, truncated
            reason = f"已损坏（{error}）"
        self.discard()
        raise Damaged(f"⚠️ 代码索引{reason}，已删除并将重建: {self.path}")

    @staticmethod
    def _seen(conn: sqlite3.Connection) -> tuple[int, set[str]]:
        """The schema version and the tables, from one snapshot."""
        conn.execute("BEGIN")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            return version, {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.execute("COMMIT")

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.executescript("BEGIN;" + _TABLES + f"PRAGMA user_version = {SCHEMA}; COMMIT;")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', '0')")

    def discard(self) -> None:
        """Delete the database (its WAL and shared-memory files too)."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def meta(self, key: str, default: str = "") -> str:
        row = self.connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def generation(self) -> int:
        return int(self.meta("generation", "0") or 0)

    def bump(self, conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'")

    def size_bytes(self) -> int:
        return sum(os.path.getsize(str(self.path) + s) for s in ("", "-wal") if os.path.exists(str(self.path) + s))
