"""The long-term memory file (reference j.1-j.3): format both ways, locking, atomic writes, corruption."""

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from paicli.memory.longterm.entry import (
    Entry, format_instant, is_visible_in_project, new_fact, parse_instant, to_json,
)
from paicli.memory.longterm.file import MemoryBackupError, MemoryFile

PAICLI_FILE = """[ {
  "id" : "fact-1a2b3c4d",
  "content" : "项目使用 Java 17",
  "type" : "FACT",
  "timestamp" : "2026-09-23T08:00:00Z",
  "lastVerifiedAt" : "2026-09-23T08:00:00Z",
  "metadata" : {"source" : "fact", "scope" : "project", "project" : "/abs/real/path"},
  "tokenCount" : 5
} ]"""

WRITER = """
import sys
from paicli.memory.longterm.file import MemoryFile
from paicli.memory.longterm.entry import new_fact
path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
memory = MemoryFile(path)
for i in range(count):
    memory.mutate(lambda entries: entries.append(new_fact(f"{tag} fact {i}", scope="global")))
"""


def _fact(content: str, **kw) -> Entry:
    return new_fact(content, scope="global", now=datetime(2026, 9, 23, 8, tzinfo=UTC), **kw)


def _writers(path: Path, processes: int, count: int) -> list[subprocess.Popen]:
    root = Path(__file__).resolve().parents[2]
    return [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"p{p}", str(count)], cwd=root)
            for p in range(processes)]


def test_paicli_file_loads_unchanged_and_writes_back_in_its_shape(tmp_path):
    path = tmp_path / "long_term_memory.json"
    path.write_text(PAICLI_FILE, encoding="utf-8")
    [entry] = MemoryFile(path).read()
    assert (entry.id, entry.content, entry.type, entry.token_count) == ("fact-1a2b3c4d", "项目使用 Java 17", "FACT", 5)
    assert entry.scope == "project" and entry.project == "/abs/real/path"
    assert json.loads(json.dumps(to_json(entry))) == json.loads(PAICLI_FILE)[0]
    assert list(to_json(entry)) == ["id", "content", "type", "timestamp", "lastVerifiedAt", "metadata", "tokenCount"]


def test_round_trip_through_the_file(tmp_path):
    memory = MemoryFile(tmp_path / "long_term_memory.json")
    saved = [_fact("项目使用 Java 17"), _fact("服务端口是 8080", extra={"source_files": "a.py,b.py"})]
    memory.mutate(lambda entries: entries.extend(saved))
    assert MemoryFile(memory.path).read() == saved
    assert "项目使用 Java 17" in memory.path.read_text(encoding="utf-8")  # readable, not \\u-escaped


def test_loading_is_tolerant_like_paicli(tmp_path):
    path = tmp_path / "long_term_memory.json"
    path.write_text(json.dumps([
        {"id": "fact-a", "content": "no times", "metadata": {"n": 3, "flag": True, "gone": None}},
        {"id": "fact-b", "content": "legacy", "timestamp": "2026-01-02T03:04:05.123456789Z"},
        {"content": "no id"}, "not an object", {"id": "fact-c", "content": "x", "timestamp": "bad"},
        {"id": "fact-d", "content": "x", "type": "NOPE"},
    ]), encoding="utf-8")
    a, b, no_id, c = MemoryFile(path).read()  # the string and the unknown type are kept, not read
    assert dict(a.metadata) == {"n": "3", "flag": "true"} and a.token_count == 2
    assert a.last_verified_at == a.timestamp
    assert b.last_verified_at == b.timestamp == datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert no_id.id.startswith("anon-") and no_id.content == "no id"
    assert c.id == "fact-c" and c.timestamp.tzinfo is not None  # an unreadable time counts as missing


def test_both_metadata_spellings_mean_pending_and_verify_clears_them():
    code = Entry("fact-1", "x", metadata={"source": "auto_user_fact", "verification_pending": "true"})
    seed = Entry("fact-2", "x", metadata={"source": "auto_extracted", "verification": "unverified"})
    later = datetime(2027, 1, 1, tzinfo=UTC)
    for entry in (code, seed):
        assert entry.verification_pending
        verified = entry.with_last_verified_at(later)
        assert not verified.verification_pending and verified.last_verified_at == later


def test_instants_print_like_java():
    assert format_instant(datetime(2026, 9, 23, 8, tzinfo=UTC)) == "2026-09-23T08:00:00Z"
    assert format_instant(datetime(2026, 9, 23, 8, 0, 0, 120000, tzinfo=UTC)) == "2026-09-23T08:00:00.120Z"
    assert parse_instant("2026-09-23T08:00:00Z") == datetime(2026, 9, 23, 8, tzinfo=UTC)


def test_visibility_is_global_or_same_project():
    assert is_visible_in_project(_fact("g"), None)
    local = new_fact("p", project="/p")
    assert is_visible_in_project(local, "/p") and not is_visible_in_project(local, "/q")
    assert not is_visible_in_project(local, " ")


def test_read_refreshes_when_another_writer_changed_the_file(tmp_path):
    first, second = MemoryFile(tmp_path / "m.json"), MemoryFile(tmp_path / "m.json")
    assert first.read() == []
    second.mutate(lambda entries: entries.append(_fact("from the other writer")))
    assert [e.content for e in first.read()] == ["from the other writer"]


def test_mutate_without_a_change_does_not_write(tmp_path):
    memory = MemoryFile(tmp_path / "m.json")
    assert memory.mutate(lambda entries: "nothing") == "nothing"
    assert not memory.path.exists()


@pytest.mark.process
def test_concurrent_writer_processes_lose_nothing(tmp_path):
    path = tmp_path / "long_term_memory.json"
    procs, count = _writers(path, 4, 15), 15
    assert all(p.wait(timeout=120) == 0 for p in procs)
    contents = {e["content"] for e in json.loads(path.read_text(encoding="utf-8"))}
    assert contents == {f"p{p} fact {i}" for p in range(4) for i in range(count)}


def test_concurrent_threads_lose_nothing(tmp_path):
    memory = MemoryFile(tmp_path / "m.json")
    def write(tag):
        for i in range(20):
            MemoryFile(memory.path).mutate(lambda entries: entries.append(_fact(f"{tag}-{i}")))
    threads = [threading.Thread(target=write, args=(t,)) for t in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(memory.read()) == 120


@pytest.mark.process
def test_a_reader_never_sees_a_partial_file(tmp_path):
    path = tmp_path / "long_term_memory.json"
    MemoryFile(path).mutate(lambda entries: entries.append(_fact("seed " * 500)))
    procs, bad, reads = _writers(path, 3, 20), [], 0
    while any(p.poll() is None for p in procs):
        try:
            json.loads(path.read_bytes())
            reads += 1
        except ValueError as error:
            bad.append(error)
    assert not bad and reads > 0
    assert len(json.loads(path.read_bytes())) == 61


def test_corrupt_file_is_backed_up_and_entries_in_memory_survive(tmp_path):
    path = tmp_path / "long_term_memory.json"
    memory = MemoryFile(path)
    memory.mutate(lambda entries: entries.append(_fact("fact-1")))
    path.write_text("[{ broken", encoding="utf-8")
    assert [e.content for e in memory.read()] == ["fact-1"]  # j.3: "no data", memory kept
    [backup] = tmp_path.glob("long_term_memory.json.corrupt-*")
    assert backup.read_text(encoding="utf-8") == "[{ broken"
    memory.mutate(lambda entries: entries.append(_fact("fact-2")))  # j.3: the next write regenerates
    assert [e["content"] for e in json.loads(path.read_text(encoding="utf-8"))] == ["fact-1", "fact-2"]
    assert len(list(tmp_path.glob("*.corrupt-*"))) == 1  # backed up once, not on every read


def test_corrupt_file_is_not_overwritten_when_it_cannot_be_backed_up(tmp_path):
    # A name so long that adding ".corrupt-<millis>" exceeds the file-system limit: the copy fails.
    path = tmp_path / ("m" * 240 + ".json")
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(MemoryBackupError):
        MemoryFile(path).mutate(lambda entries: entries.append(_fact("new")))
    assert path.read_text(encoding="utf-8") == "not json"


def test_a_non_array_file_is_corrupt_too(tmp_path):
    path = tmp_path / "long_term_memory.json"
    path.write_text('{"id": "x"}', encoding="utf-8")
    assert MemoryFile(path).read() == []
    assert len(list(tmp_path.glob("*.corrupt-*"))) == 1


def test_a_fresh_process_salvages_readable_entries_from_a_corrupt_file(tmp_path):
    # "never replaced by less": a process holding nothing must not regenerate the file from nothing.
    path = tmp_path / "long_term_memory.json"
    MemoryFile(path).mutate(lambda entries: entries.extend([_fact("fact-1"), _fact("fact-2"), _fact("fact-3")]))
    good = path.read_text(encoding="utf-8")
    torn = good[: good.rindex('"content"')]  # the last entry is cut in half
    path.write_text(torn, encoding="utf-8")
    fresh = MemoryFile(path)
    assert [e.content for e in fresh.read()] == ["fact-1", "fact-2"]
    fresh.mutate(lambda entries: entries.append(_fact("fact-4")))
    assert [e["content"] for e in json.loads(path.read_text(encoding="utf-8"))] == ["fact-1", "fact-2", "fact-4"]
    [backup] = tmp_path.glob("long_term_memory.json.corrupt-*")
    assert backup.read_text(encoding="utf-8") == torn


def test_salvage_keeps_held_entries_first_and_skips_non_entries(tmp_path):
    path = tmp_path / "long_term_memory.json"
    memory = MemoryFile(path)
    held = _fact("held")
    memory.mutate(lambda entries: entries.append(held))
    path.write_text(f'garbage {{"id": "{held.id}", "content": "other"}} {{"x": 1}} '
                    '{"id": "fact-9", "content": "kept", "metadata": {"scope": "global"}} [', encoding="utf-8")
    assert [(e.id, e.content) for e in memory.read()] == [(held.id, "held"), ("fact-9", "kept")]
