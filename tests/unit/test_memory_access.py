"""A memory file, directory or lock that cannot be used: one line naming the path, reads go on
without memory, writes are refused and change nothing (paicli issue 10).

Tests run as root, where chmod stops nothing. So each case is made to fail for root too (a
directory where the file should be, a file where the directory should be, an immutable file),
and the chmod cases run in a forked child that drops to ``nobody`` first.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from paicli.memory.errors import PaicliError
from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.file import MemoryFile

NOBODY = 65534
SEED = [{"id": "fact-5eed0001", "content": "seed fact", "metadata": {"scope": "global"}}]


def _fact(content: str):
    return new_fact(content, scope="global", now=datetime(2026, 9, 23, 8, tzinfo=UTC))


def _read_with_warnings(memory: MemoryFile, times: int = 3) -> tuple[list, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entries = [memory.read() for _ in range(times)][-1]
    return entries, [str(w.message) for w in caught]


def _refused(memory: MemoryFile) -> str:
    with pytest.raises(PaicliError) as raised:
        memory.mutate(lambda entries: entries.append(_fact("must not be written")))
    assert raised.value.exit_code == 1 and "\n" not in str(raised.value)
    return str(raised.value)


def test_a_directory_where_the_file_should_be(tmp_path):
    path = tmp_path / "long_term_memory.json"
    path.mkdir()
    memory = MemoryFile(path)
    entries, lines = _read_with_warnings(memory)
    assert entries == [] and len(lines) == 1 and str(path) in lines[0]  # once, however often read
    assert str(path) in _refused(memory)
    assert path.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["long_term_memory.json",
                                                                             "long_term_memory.json.lock"]


def test_a_file_where_the_directory_should_be(tmp_path):
    (tmp_path / "memory").write_text("not a directory", encoding="utf-8")
    memory = MemoryFile(tmp_path / "memory" / "long_term_memory.json")
    entries, lines = _read_with_warnings(memory)
    assert entries == [] and len(lines) == 1 and str(memory.path) in lines[0]
    assert str(tmp_path / "memory") in _refused(memory)
    assert (tmp_path / "memory").read_text(encoding="utf-8") == "not a directory"


def test_a_lock_file_that_cannot_be_made_refuses_the_write(tmp_path):
    path = tmp_path / "long_term_memory.json"
    path.write_text(json.dumps(SEED), encoding="utf-8")
    (tmp_path / "long_term_memory.json.lock").mkdir()
    memory = MemoryFile(path)
    assert [e.content for e in memory.read()] == ["seed fact"]  # reading needs no lock
    assert str(tmp_path / "long_term_memory.json.lock") in _refused(memory)
    assert json.loads(path.read_text(encoding="utf-8")) == SEED


@pytest.fixture
def immutable() -> Iterator[Callable[[Path], None]]:
    """``chattr +i``: even root cannot change the file or the directory's entries."""
    marked: list[Path] = []

    def mark(path: Path) -> None:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
            pytest.skip("chattr +i is not available here")
        marked.append(path)

    yield mark
    for path in marked:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_an_immutable_file_refuses_the_write_and_keeps_what_was_read(tmp_path, immutable):
    path = tmp_path / "long_term_memory.json"
    path.write_text(json.dumps(SEED), encoding="utf-8")
    memory = MemoryFile(path)
    assert len(memory.read()) == 1
    immutable(path)
    assert str(path) in _refused(memory)
    assert [e.content for e in memory.read()] == ["seed fact"]  # the refused entry is not held either
    assert json.loads(path.read_text(encoding="utf-8")) == SEED


def test_an_immutable_directory_refuses_the_write(tmp_path, immutable):
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "long_term_memory.json").write_text(json.dumps(SEED), encoding="utf-8")
    (directory / "long_term_memory.json.lock").touch()
    immutable(directory)
    memory = MemoryFile(directory / "long_term_memory.json")
    assert str(directory) in _refused(memory)
    assert sorted(p.name for p in directory.iterdir()) == ["long_term_memory.json", "long_term_memory.json.lock"]


# -- a real unprivileged user -------------------------------------------------------------------------
@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the unprivileged user can reach (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="paicli-memory-access-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def _unprivileged(fn: Callable[[], object]) -> object:
    """``fn()`` as a user chmod applies to: this one, or ``nobody`` in a forked child of root."""
    if os.geteuid() != 0:
        return fn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run, send the result back, never return into pytest
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = ("ok", fn())
        except BaseException:  # noqa: BLE001 - anything goes back to the parent to be reported
            result = ("error", traceback.format_exc())
        with os.fdopen(write_end, "wb") as out:
            pickle.dump(result, out)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as src:
        status, value = pickle.load(src)
    os.waitpid(pid, 0)
    assert status == "ok", value
    return value


def _owned(path: Path, mode: int) -> None:
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    path.chmod(mode)


def _outcome(path: Path) -> tuple[list[str], list[str], str]:
    """What the unprivileged user gets: entries read, warnings, and the refusal of a write."""
    memory = MemoryFile(path)
    entries, lines = _read_with_warnings(memory)
    try:
        memory.mutate(lambda entries: entries.append(_fact("must not be written")))
        refusal = "written"
    except PaicliError as error:
        refusal = f"{error.exit_code}: {error}"
    return [e.content for e in entries], lines, refusal


def test_an_unreadable_file_reads_as_no_memory_and_refuses_writes(shared_dir):
    path = shared_dir / "long_term_memory.json"
    path.write_text(json.dumps(SEED), encoding="utf-8")
    path.chmod(0o000)  # owned by root (or by us, unreadable all the same)
    _owned(shared_dir, 0o755)
    entries, lines, refusal = _unprivileged(lambda: _outcome(path))
    assert entries == [] and len(lines) == 1 and str(path) in lines[0]
    assert refusal.startswith("1: ") and str(path) in refusal
    path.chmod(0o644)
    assert json.loads(path.read_text(encoding="utf-8")) == SEED


def test_a_read_only_file_is_read_but_not_written(shared_dir):
    path = shared_dir / "long_term_memory.json"
    path.write_text(json.dumps(SEED), encoding="utf-8")
    _owned(path, 0o444)
    _owned(shared_dir, 0o755)
    entries, lines, refusal = _unprivileged(lambda: _outcome(path))
    assert entries == ["seed fact"] and lines == []
    assert refusal.startswith("1: ") and str(path) in refusal
    assert json.loads(path.read_text(encoding="utf-8")) == SEED


def test_a_read_only_directory_is_read_but_not_written(shared_dir):
    path = shared_dir / "long_term_memory.json"
    path.write_text(json.dumps(SEED), encoding="utf-8")
    _owned(path, 0o644)
    _owned(shared_dir, 0o555)
    entries, lines, refusal = _unprivileged(lambda: _outcome(path))
    assert entries == ["seed fact"] and lines == []
    assert refusal.startswith("1: ") and str(shared_dir) in refusal
    assert json.loads(path.read_text(encoding="utf-8")) == SEED
