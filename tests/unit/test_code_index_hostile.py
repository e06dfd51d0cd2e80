"""Hostile input for the code index (issue 37): a 50 MB file, one 10 MB line, invalid UTF-8, a
symlink to /, a file that breaks the parser's deadline, 100k files: each is one line of the
report or a skip reason, memory stays bounded, and the index stays intact and searchable."""

from __future__ import annotations

import os
import tracemalloc

import pytest

import paicli.codeindex.extract as extract_module
from paicli.codeindex.indexer import update
from paicli.codeindex.search import search
from paicli.codeindex.store import Store
from paicli.codeindex.walk import walk
from paicli.tools.base import ToolContext
from paicli.tools.builtin.code_search import LazyIndexes, search_code
from paicli.codeindex.options import CodeIndexOptions


def intact(store: Store) -> bool:
    return store.connection().execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "ok.py").write_text("def survivor():\n    '''Still here after the hostile files.'''\n")
    return root


def test_huge_files_long_lines_bad_bytes_and_a_link_to_root_are_skipped_or_read_safely(tmp_path, project):
    with open(project / "huge.py", "wb") as handle:  # 50 MB: never read
        handle.truncate(50 * 1024 * 1024)
    (project / "one_line.js").write_bytes(b"var x = 1;" * (1024 * 1024))  # one 10 MB line
    (project / "minified.js").write_bytes(b"a=1;" * 200_000)  # under the size limit, one 800 KB line
    (project / "latin1.py").write_bytes(b"def caf\xe9():\n    return '\xff\xfe'\n\ndef plain_after():\n    pass\n")
    (project / "nul.txt").write_bytes(b"text\0with a NUL byte")
    (project / "root").symlink_to("/")
    (project / "loop").symlink_to(project)
    store = Store(tmp_path / "index")
    tracemalloc.start()
    report = update(store, project)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert report.files == 2  # ok.py and latin1.py
    assert report.skipped == {"huge": 2, "generated": 1, "binary": 1, "symlink": 2}
    assert peak < 64 * 1024 * 1024  # neither big file was held whole
    assert intact(store)
    assert search(store, "survivor", 1).hits[0].path == "ok.py"
    assert search(store, "plain_after", 1).hits[0].start_line == 4  # parsed past the bad bytes


def test_a_parse_past_its_deadline_makes_the_file_text_with_one_line(tmp_path, project):
    saved = extract_module.PARSE_BUDGET_MICROS
    (project / "deep.py").write_text("x = " + "(\n" * 3000 + "1" + ")\n" * 3000)
    store = Store(tmp_path / "index")
    try:
        extract_module.PARSE_BUDGET_MICROS = 0  # the module's limit (restored below), so any parse is late
        report = update(store, project, workers=1)
    finally:
        extract_module.PARSE_BUDGET_MICROS = saved
    assert report.files == 2 and [p for p in report.problems if "语法解析失败" in p] == [report.problems[0]]
    assert intact(store) and search(store, "survivor", 1).hits[0].path == "ok.py"  # found as a text window


@pytest.mark.process  # 100k files on disk: slow to make, so not in the fast loop
def test_a_hundred_thousand_files_are_refused_by_the_tool_at_once_and_walked_in_bounded_memory(tmp_path, project):
    for d in range(100):
        folder = project / f"d{d:02}"
        folder.mkdir()
        for i in range(1000):
            fd = os.open(folder / f"m{i:03}.py", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b"x = 1\n")
            os.close(fd)
    tracemalloc.start()
    walked = walk(project, limit=20_000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert walked.truncated and len(walked.files) == 20_000 and peak < 64 * 1024 * 1024
    text = search_code({"query": "x"}, ToolContext(root=project.resolve()),
                       LazyIndexes(tmp_path / "home", CodeIndexOptions()).get())
    assert text.startswith("代码库尚未索引，请先使用 /index 命令索引当前项目。\n（项目文件超过 20000 个")
    assert text.ok is False
