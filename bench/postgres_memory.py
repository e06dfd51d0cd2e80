"""Long-term memory at 10,000 memories: PostgreSQL (``PostgresStore``) beside the JSON file (issue 28).

The same corpus (``memory_corpus.build_corpus``) in ``long_term_memory.json`` and in a
``PostgresStore``; the time of ``LongTermMemory.search`` (a turn's retrieval: every memory is
read, then ranked) and of ``save_fact`` (read, dedup and conflict check, write, under the lock).
A report only: no target yet. The database: ``PAICLI_TEST_DATABASE_URL``, else a throwaway
cluster when PostgreSQL's binaries are installed.

    .venv/bin/python bench/postgres_memory.py [--size 10000] [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ahead of bench/: `memory` is the package

from langgraph.store.postgres import PostgresStore  # noqa: E402

from memory.longterm.manager import LongTermMemory, MemoryOptions  # noqa: E402
from memory.longterm.store_entries import memory_of  # noqa: E402
from memory_corpus import PROJECT, build_corpus  # noqa: E402
from tests.support.postgres import URL_VARIABLE, Cluster, binaries, fresh_database  # noqa: E402

QUERIES = ("数据库用的是什么", "前端构建工具", "CI 配置在哪里", "token 有效期多久", "缓存 key 前缀", "how are logs shipped")


def measure(memory: LongTermMemory, runs: int) -> tuple[float, float]:
    rng = random.Random(7)
    search = []
    for i in range(runs):
        start = time.perf_counter()
        memory.search(QUERIES[i % len(QUERIES)], PROJECT, 10)
        search.append(time.perf_counter() - start)
    write = []
    for i in range(runs):
        text = f"新增配置项 {''.join(rng.choices('abcdefghijklmnopqrstuvwxyz', k=12))} 默认关闭"
        start = time.perf_counter()
        memory.save_fact(text, scope="project", project_key=PROJECT, allow_conflict=True)
        write.append(time.perf_counter() - start)
    return sorted(search)[len(search) // 2] * 1e3, sorted(write)[len(write) // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    entries = build_corpus(args.size).entries
    cluster, url = None, os.environ.get(URL_VARIABLE)
    if not url:
        if binaries() is None:
            sys.exit(f"no PostgreSQL: set {URL_VARIABLE} or install postgresql")
        cluster = Cluster(binaries())
        url = cluster.start()
    try:
        with tempfile.TemporaryDirectory() as tmp, PostgresStore.from_conn_string(fresh_database(url)) as store:
            store.setup()
            in_file = LongTermMemory(tmp, MemoryOptions(sync=False))
            in_file.file.mutate(lambda current: current.extend(entries))
            in_db = memory_of(store)
            start = time.perf_counter()
            in_db.file.mutate(lambda current: current.extend(entries))
            load = time.perf_counter() - start
            in_db.search("warm up", PROJECT, 10)
            in_file.search("warm up", PROJECT, 10)
            print(f"{args.size:,} memories; median of {args.runs} runs (ms); loading into PostgreSQL took {load:.1f} s")
            print(f"{'store':<12} {'search':>8} {'write':>8}")
            for name, memory in (("JSON file", in_file), ("PostgreSQL", in_db)):
                search, write = measure(memory, args.runs)
                print(f"{name:<12} {search:>8.1f} {write:>8.1f}")
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
