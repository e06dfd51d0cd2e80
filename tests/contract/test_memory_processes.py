"""Issue 5's contract: several paicli processes share one long_term_memory.json.

Eight processes each put 50 distinct memories through the store at the same time; a ninth
reads the file in a loop meanwhile. Every entry must survive and every read must be valid JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # eight writer processes on one file

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys
    from paicli.memory.longterm.store import GLOBAL_NS, open_store, project_namespace
    directory, writer = sys.argv[1], int(sys.argv[2])
    store = open_store(directory)
    for i in range(50):
        ns = GLOBAL_NS if i % 2 else project_namespace("/work/proj.%d" % (writer % 3))
        store.put(ns, "fact-w%dn%02d" % (writer, i), {"content": "进程 %d 写入第 %d 条记忆 id%dx%d" % (writer, i, writer, i)})
""")

READER = textwrap.dedent("""
    import json, os, sys, time
    path, stop = sys.argv[1], sys.argv[2]
    reads = bad = 0
    while not os.path.exists(stop):
        try:
            data = open(path, "rb").read()
        except FileNotFoundError:
            continue
        try:
            json.loads(data)
            reads += 1
        except ValueError:
            bad += 1
    print(reads, bad)
""")


def _python(script: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, **kw)


def test_eight_writers_keep_all_400_entries_and_a_reader_never_sees_invalid_json(tmp_path):
    path, stop = tmp_path / "long_term_memory.json", tmp_path / "stop"
    reader = _python(READER, str(path), str(stop), stdout=subprocess.PIPE, text=True)
    writers = [_python(WRITER, str(tmp_path), str(w)) for w in range(8)]
    assert [w.wait(timeout=120) for w in writers] == [0] * 8
    stop.touch()
    reads, bad = map(int, reader.communicate(timeout=patience(30))[0].split())
    entries = json.loads(path.read_bytes())
    assert len(entries) == 400
    assert len({e["id"] for e in entries}) == 400
    assert bad == 0 and reads > 0
