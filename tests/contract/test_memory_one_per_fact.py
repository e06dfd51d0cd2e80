"""Issue 35 item 2: one memory per fact, whatever writes the store, with real processes at once.

Two writers start together (``tests/support/memory_writer.py``): two LangGraph Server-style
writers (``AsyncPostgresStore``, the nodes' writes on worker threads), two CLI processes
(``PAICLI_DATABASE_URL``), one of each, and the same through the memory file. Each writes 50
facts both write and 50 of its own: 50 + 100 memories, none twice, none lost. Then conflicting
facts (the same 20 services on different ports) without ``--force``: for each service exactly one
writer stores its fact and the other is told of the conflict, so conflict detection holds across
processes too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from tests.support.memory_writer import PROJECT, SERVICES

pytestmark = pytest.mark.process  # writer processes at once

ROOT = Path(__file__).resolve().parents[2]


def run_writers(kinds: tuple[str, str], target: str, go: Path) -> dict[str, Counter]:
    """Each phase's write statuses, summed over the writers."""
    writers = [subprocess.Popen([sys.executable, "-m", "tests.support.memory_writer", kind, target, str(w), str(go),
                                 str(len(kinds))], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for w, kind in enumerate(kinds)]
    try:
        deadline = time.monotonic() + 120
        while not all(Path(f"{go}.ready{w}").exists() for w in range(len(kinds))):  # all connected
            assert time.monotonic() < deadline and all(w.poll() is None for w in writers), \
                [w.communicate()[1][-2000:] for w in writers if w.poll() is not None]
            time.sleep(0.02)
        go.touch()  # ... and they write at once
        out = [w.communicate(timeout=240) for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
    assert [w.returncode for w in writers] == [0] * len(kinds), [err[-2000:] for _, err in out]
    done = [json.loads(stdout) for stdout, _ in out]
    return {phase: sum((Counter(d[phase]) for d in done), Counter()) for phase in ("same", "ports")}


def rows(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT value->>'content' FROM store WHERE prefix LIKE 'memories.%'")]


def file_rows(directory: Path) -> list[str]:
    return [e["content"] for e in json.loads((directory / "long_term_memory.json").read_text(encoding="utf-8"))]


def expected_same() -> list[str]:
    return sorted([f"团队约定第 {i:02d} 条 shared-{i:02d}" for i in range(50)]
                  + [f"第 {w} 号写入者的第 {i:02d} 条记录 token-w{w}n{i:02d}" for w in range(2) for i in range(50)])


@pytest.fixture
def database(database_url):
    from paicli.run.database import open_database

    open_database(database_url, PROJECT).close()  # the tables, as any first paicli would
    return database_url


@pytest.mark.parametrize("kinds", [("server", "server"), ("cli", "cli"), ("server", "cli")], ids="+".join)
def test_two_database_writers_store_each_fact_once_and_lose_none(database, kinds, tmp_path):
    counts = run_writers(kinds, database, tmp_path / "go")
    found = rows(database)
    assert sorted(c for c in found if "服务监听端口" not in c) == expected_same()  # 50 + 100: no duplicate, no loss
    assert counts["same"] == Counter(STORED=150, DUPLICATE=50)
    ports = [c for c in found if "服务监听端口" in c]
    assert sorted(c[:4] for c in ports) == sorted(SERVICES)  # each service once: one writer won it
    assert counts["ports"] == Counter(STORED=20, CONFLICT=20)


def test_two_file_writers_store_each_fact_once_and_lose_none(tmp_path):
    directory = tmp_path / "memory"
    counts = run_writers(("file-store", "file-cli"), str(directory), tmp_path / "go")
    found = file_rows(directory)
    assert sorted(c for c in found if "服务监听端口" not in c) == expected_same()
    assert counts["same"] == Counter(STORED=150, DUPLICATE=50)
    assert sorted(c[:4] for c in found if "服务监听端口" in c) == sorted(SERVICES)
    assert counts["ports"] == Counter(STORED=20, CONFLICT=20)
