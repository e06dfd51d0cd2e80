"""Issue 28: long-term memory in a real PostgreSQL (``PostgresStore``), never a mock.

- the recall set ranks the same through a ``PostgresStore`` as through ``long_term_memory.json``;
- four processes each saving 25 memories (and 25 facts they all save) to one project at the same
  time: all 100 are there, and each shared fact once (the advisory lock around read-dedup-write).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from langgraph.store.postgres import PostgresStore

from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.store import project_namespace
from paicli.memory.longterm.store_entries import memory_of

ROOT = Path(__file__).resolve().parents[2]
P = "/work/proj"


@pytest.fixture
def pg_store(database_url):
    with PostgresStore.from_conn_string(database_url) as store:
        store.setup()
        yield store


def test_the_recall_set_ranks_the_same_through_postgres_as_through_the_file(tmp_path, pg_store):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import memory_corpus
        import recall_set
    finally:
        sys.path.remove(str(ROOT / "bench"))
    data, project, now = recall_set.build(0), memory_corpus.PROJECT, memory_corpus.NOW
    in_file = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    in_file.file.mutate(lambda entries: entries.extend(data.entries))
    in_db = memory_of(pg_store)
    in_db.file.mutate(lambda entries: entries.extend(data.entries))
    fresh = LongTermMemory(None, entries=type(in_db.file)(pg_store))  # read back from the tables
    assert sorted(e.id for e in fresh.entries()) == sorted(e.id for e in data.entries)
    for question, *_ in recall_set.questions():
        expected = [s.entry.id for s in in_file.search(question, project, limit=5, now=now)]
        assert [s.entry.id for s in fresh.search(question, project, limit=5, now=now)] == expected, question


WRITER = textwrap.dedent("""
    import os, sys, time
    from langgraph.store.postgres import PostgresStore
    from paicli.memory.longterm.store_entries import memory_of
    url, writer, go = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with PostgresStore.from_conn_string(url) as store:
        memory = memory_of(store)
        open(f"{go}.ready{writer}", "w").close()  # connected: tell the test
        while not os.path.exists(go):  # all four start together
            time.sleep(0.01)
        for i in range(25):
            memory.save_fact("第 %d 号进程的第 %d 条记录 token-w%dn%02d" % (writer, i, writer, i), scope="project",
                             project_key="/work/proj", allow_conflict=True)
            # the same fact from every process at about the same moment: stored once
            memory.save_fact("团队约定 shared-%02d" % i, scope="project", project_key="/work/proj",
                             allow_conflict=True)
""")


@pytest.mark.process
def test_four_processes_writing_25_memories_each_lose_nothing_and_store_no_duplicate(database_url, pg_store,
                                                                                   tmp_path):
    go = tmp_path / "go"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, database_url, str(w), str(go)], cwd=ROOT,
                                stderr=subprocess.PIPE, text=True) for w in range(4)]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"go.ready{w}").exists() for w in range(4)):  # every interpreter is connected
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers), "a writer never got ready"
        time.sleep(0.05)
    go.touch()
    errors = [w.communicate(timeout=180)[1] for w in writers]
    assert [w.returncode for w in writers] == [0] * 4, errors
    contents = [item.value["content"] for item in pg_store.search(project_namespace(P), limit=1000)]
    assert sorted(c for c in contents if "shared-" in c) == [f"团队约定 shared-{i:02d}" for i in range(25)]
    assert len(contents) == 125
    assert {f"token-w{w}n{i:02d}" for w in range(4) for i in range(25)} == {c.split()[-1] for c in contents if "token-" in c}
