"""Long-term memory in PostgreSQL at 1,000 and 10,000 memories, beside a baseline tree (issues 28, 35).

For each size, the same corpus (``memory_corpus.build_corpus``) is put in a fresh database and the
median time is taken of ``LongTermMemory.search`` (a turn's retrieval: a change check, then every
memory ranked) and of ``save_fact`` (read, dedup and conflict check, write, under the lock), for
two writers:
- **CLI**: ``paicli.run.database.open_database(url, project).memory(options)``, what ``PAICLI_DATABASE_URL``
  gives the REPL and ``-p`` (sync ``PostgresStore``; issue 35: on a checked pool);
- **server**: ``memory_of(AsyncPostgresStore)`` called from a worker thread, as LangGraph Server's
  graphs reach it (issue 35: under the same advisory lock, taken on the store's event loop).
and the JSON file for reference. Each (tree, size) runs in a process of its own with that tree's
``memory``/``paicli`` first on ``sys.path``, on a fresh database; ``--baseline DIR`` adds DIR's
(e.g. ``git archive <commit> | tar -x -C DIR``), the two interleaved ``--rounds`` times, and the
table gives the median over the rounds of each round's median, and the ratio ours / baseline.
A report only: no target. The database: ``PAICLI_TEST_DATABASE_URL``, else a throwaway cluster.

    .venv/bin/python bench/postgres_memory.py [--sizes 1000 10000] [--runs 20] [--rounds 3] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # ahead of bench/: `memory` is the package

from tests.support.postgres import URL_VARIABLE, Cluster, binaries, fresh_database  # noqa: E402

QUERIES = ("数据库用的是什么", "前端构建工具", "CI 配置在哪里", "token 有效期多久", "缓存 key 前缀", "how are logs shipped")

CHILD = textwrap.dedent("""
    import asyncio, json, random, sys, tempfile, time
    tree, url, size, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sys.path[:0] = [tree, tree + "/bench"]
    from memory_corpus import PROJECT, build_corpus
    from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
    from paicli.memory.longterm.store_entries import memory_of
    from paicli.run.database import open_database
    QUERIES = %r
    entries = build_corpus(size).entries
    cache = tempfile.TemporaryDirectory()  # jieba's dictionary cache, never its fixed name in /tmp
    options = MemoryOptions(sync=False, cache_dir=__import__("pathlib").Path(cache.name))

    def measure(memory):
        rng = random.Random(7)
        memory.search("warm up", PROJECT, 10)
        search, write = [], []
        for i in range(runs):
            start = time.perf_counter()
            memory.search(QUERIES[i %% len(QUERIES)], PROJECT, 10)
            search.append(time.perf_counter() - start)
        for i in range(runs):
            text = f"新增配置项 {''.join(rng.choices('abcdefghijklmnopqrstuvwxyz', k=12))} 默认关闭"
            start = time.perf_counter()
            memory.save_fact(text, scope="project", project_key=PROJECT, allow_conflict=True)
            write.append(time.perf_counter() - start)
        return {"search": sorted(search)[runs // 2] * 1e3, "write": sorted(write)[runs // 2] * 1e3}

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        in_file = LongTermMemory(tmp, options)
        in_file.file.mutate(lambda current: current.extend(entries))
        out["file"] = measure(in_file)
    database = open_database(url, PROJECT)
    cli = database.memory(options)
    start = time.perf_counter()
    cli.file.mutate(lambda current: current.extend(entries))
    out["load"] = time.perf_counter() - start
    out["CLI"] = measure(cli)

    async def served():
        from langgraph.store.postgres.aio import AsyncPostgresStore

        async with AsyncPostgresStore.from_conn_string(url, pool_config={"min_size": 1, "max_size": 4}) as store:
            return await asyncio.to_thread(measure, memory_of(store, options))

    out["server"] = asyncio.run(served())
    getattr(database, "close", lambda: None)()
    cache.cleanup()
    print(json.dumps(out))
""") % (QUERIES,)


def run(tree: Path, url: str, size: int, runs: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), fresh_database(url), str(size), str(runs)],
                          capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(f"the bench on {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs of each tree per size")
    parser.add_argument("--baseline", type=Path, help="another source tree, measured the same way in this run")
    args = parser.parse_args()
    cluster, url = None, os.environ.get(URL_VARIABLE)
    if not url:
        if binaries() is None:
            sys.exit(f"no PostgreSQL: set {URL_VARIABLE} or install postgresql")
        cluster = Cluster(binaries())
        url = cluster.start()
    trees = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("ours", ROOT)]
    rounds: dict[tuple[str, int], list[dict]] = {}
    try:
        for size in args.sizes:
            for _ in range(args.rounds):
                for name, tree in trees:
                    rounds.setdefault((name, size), []).append(run(tree, url, size, args.runs))
    finally:
        if cluster is not None:
            cluster.stop()
    results = {key: _median(found) for key, found in rounds.items()}
    print(f"ms: the median over {args.rounds} interleaved rounds of each round's median of {args.runs} runs"
          + (f"; baseline: {args.baseline}" if args.baseline else ""))
    head = ["memories", "writer", "op"] + [name for name, _ in trees] + (["ours/baseline"] if args.baseline else [])
    print("  ".join(f"{h:>14}" for h in head))
    for size in args.sizes:
        for writer in ("CLI", "server", "file"):
            for op in ("search", "write"):
                values = [results[(name, size)][writer][op] for name, _ in trees]
                cells = [f"{size:,}", writer, op, *(f"{v:.1f}" for v in values)]
                if args.baseline:
                    cells.append(f"{values[-1] / values[0]:.2f}")
                print("  ".join(f"{c:>14}" for c in cells))
        loads = ", ".join(f"{name} {results[(name, size)]['load']:.1f} s" for name, _ in trees)
        print(f"{'':>14}  loading {size:,} memories into PostgreSQL: {loads}")


def _median(found: list[dict]) -> dict:
    out: dict = {"load": statistics.median(r["load"] for r in found)}
    for writer in ("CLI", "server", "file"):
        out[writer] = {op: statistics.median(r[writer][op] for r in found) for op in ("search", "write")}
    return out


if __name__ == "__main__":
    main()
