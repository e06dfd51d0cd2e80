"""Issue 30: the term cache beside the memory file stays correct across processes.

Two processes add memories to one file (and search it, so they write the term cache too) while a
third searches in a loop and checks every ranking against a retriever that cuts every memory
itself. Afterwards a fresh reader ranks the same with the cache as without it, and finds every
memory written.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from paicli.memory.longterm.document import dump
from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.file import FILE_NAME
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.retriever import Retriever
from paicli.memory.longterm.term_cache import FILE_NAME as TERMS_NAME

pytestmark = pytest.mark.process  # three processes on one file and its locks

ROOT = Path(__file__).resolve().parents[2]
P = "/work/proj"
NOW = datetime(2026, 11, 29, 9, tzinfo=UTC)
QUERIES = ["发票服务端口", "支付网关超时", "billing database", "日志保留", "写入者 记忆"]

WRITER = textwrap.dedent("""
    import sys
    from paicli.memory.longterm.entry import new_fact
    from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
    directory, writer = sys.argv[1], int(sys.argv[2])
    memory = LongTermMemory(directory, MemoryOptions(sync=False))
    for i in range(30):
        fact = new_fact("写入者%d 的第 %d 条记忆：发票服务端口 %d，标记 zq%dx%d" % (writer, i, 7000 + i, writer, i),
                        project="/work/proj")
        memory.file.mutate(lambda entries: entries.append(fact))
        if i % 3 == 0:
            memory.search("发票服务端口", "/work/proj", 10)
""")

SEARCHER = textwrap.dedent("""
    import os, sys
    from datetime import datetime, UTC
    from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
    from paicli.memory.longterm.retriever import Retriever
    directory, stop = sys.argv[1], sys.argv[2]
    now = datetime(2026, 11, 29, 9, tzinfo=UTC)
    memory = LongTermMemory(directory, MemoryOptions(sync=False))
    searches = wrong = 0
    while not os.path.exists(stop) or searches < 5:
        for query in ("发票服务端口", "写入者 记忆", "billing database"):
            entries = memory.entries()
            got = [(s.entry.id, s.score) for s in memory.retriever.rank(entries, query, "/work/proj", now, 10)]
            want = [(s.entry.id, s.score) for s in Retriever().rank(entries, query, "/work/proj", now, 10)]
            searches += 1
            wrong += got != want
    print(searches, wrong)
""")


def _python(script: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, **kw)


def test_two_writers_and_a_searcher_share_the_term_cache_without_a_wrong_ranking(tmp_path):
    topics = ["发票服务监听 6380 端口", "支付网关超时 5 秒", "billing-api uses Postgres 15 as its database",
              "报表服务的日志保留 14 天", "推荐服务部署在 k8s 集群"]
    base = [new_fact(f"{topics[i % 5]}（第 {i} 条）", project=P, now=NOW - timedelta(days=i)) for i in range(200)]
    (tmp_path / FILE_NAME).write_bytes(dump(base))
    stop = tmp_path / "stop"
    searcher = _python(SEARCHER, str(tmp_path), str(stop), stdout=subprocess.PIPE, text=True)
    writers = [_python(WRITER, str(tmp_path), str(w)) for w in range(2)]
    assert [w.wait(timeout=180) for w in writers] == [0, 0]
    stop.touch()
    searches, wrong = map(int, searcher.communicate(timeout=120)[0].split())
    assert searches >= 5 and wrong == 0

    reader = LongTermMemory(tmp_path, MemoryOptions(sync=False))
    entries = reader.entries()
    assert len(entries) == 260 and (tmp_path / TERMS_NAME).is_file()
    for query in QUERIES:
        got = [(s.entry.id, s.score) for s in reader.search(query, P, 10, now=NOW)]
        assert got == [(s.entry.id, s.score) for s in Retriever().rank(entries, query, P, NOW, 10)]
    assert reader.retriever.cut <= 60  # at most what the writers added after the cache's last save
    for writer in range(2):
        for i in range(30):
            [hit] = reader.search(f"zq{writer}x{i}", P, 1, now=NOW)
            assert f"zq{writer}x{i}" in hit.entry.content
