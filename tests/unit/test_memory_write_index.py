"""The write index (``paicli.memory.longterm.write_index``): every dedup and conflict answer stays the
answer of the full scan, while a write at 10,000 memories looks at a handful of them."""

import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings, strategies as st

from paicli.memory.longterm.conflict import find_conflicts
from paicli.memory.longterm.dedup import find_duplicate
from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.file import MemoryFile
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.write_index import WriteIndex
from paicli.memory.longterm.writes import write_automatic_all, write_explicit
from tests.support.properties import examples

T0 = datetime(2026, 9, 23, 8, tzinfo=UTC)
P = "/work/proj"
# Few code points, particles and digits among them, so look-alikes, variants and numeric
# variants come up often.
ALPHABET = "端口服务的是地得用 Ja17v2.9-"
texts = st.text(ALPHABET, min_size=0, max_size=14)
facts = st.tuples(texts, st.sampled_from(["project", "global"]), st.sampled_from([P, "/other", ""]))


def _fact(content, scope, project, day):
    return new_fact(content, scope=scope, project=project or None, now=T0 + timedelta(days=day))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(facts, max_size=25), facts, st.sampled_from([0.5, 0.8, 0.95, 1.0]))
def test_the_candidates_hold_every_duplicate_and_conflict_of_the_full_scan(stored, new, threshold):
    entries = [_fact(*f, day=i) for i, f in enumerate(stored)]
    incoming = _fact(*new, day=len(stored))
    pool = WriteIndex(entries).candidates(entries, incoming, threshold)
    assert find_duplicate(pool, incoming) is find_duplicate(entries, incoming)
    assert find_conflicts(pool, incoming, threshold) == find_conflicts(entries, incoming, threshold)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(facts, min_size=1, max_size=25), st.data(), st.sampled_from([0.5, 0.8, 0.95]))
def test_the_candidates_hold_every_near_copy(stored, data, threshold):
    """A new text made from a stored one by a small edit: conflicts by Dice come up often."""
    entries = [_fact(*f, day=i) for i, f in enumerate(stored)]
    source = data.draw(st.sampled_from(stored))
    text = source[0] * 2
    at = data.draw(st.integers(0, len(text)))
    edited = text[:at] + data.draw(st.text(ALPHABET, max_size=2)) + text[at + 1:]
    entries.append(_fact(text, *source[1:], day=len(stored)))
    incoming = _fact(edited, *source[1:], day=len(stored) + 1)
    pool = WriteIndex(entries).candidates(entries, incoming, threshold)
    assert find_duplicate(pool, incoming) is find_duplicate(entries, incoming)
    assert find_conflicts(pool, incoming, threshold) == find_conflicts(entries, incoming, threshold)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(facts, max_size=15), st.lists(facts, min_size=1, max_size=6))
def test_writes_through_the_index_match_writes_without_it(stored, incoming):
    """Each write's result and the list it leaves, with the index kept up to date in between."""
    plain = [_fact(*f, day=i) for i, f in enumerate(stored)]
    indexed, index = list(plain), WriteIndex(plain)
    for i, f in enumerate(incoming):
        entry = _fact(*f, day=100 + i)
        before = list(indexed)
        a = write_explicit(plain, entry, project_key=f[2] or None)
        b = write_explicit(indexed, entry, project_key=f[2] or None, index=index)
        index.update(before, indexed)
        assert (a.status, a.duplicate, a.conflicts) == (b.status, b.duplicate, b.conflicts)
        assert plain == indexed
    batch = [_fact(*f, day=200 + i) for i, f in enumerate(incoming)] * 2  # repeats: the batch's own duplicates
    assert write_automatic_all(list(plain), batch) == write_automatic_all(list(indexed), batch, index=index)


def test_a_write_at_ten_thousand_memories_checks_a_few_of_them():
    rng = random.Random(7)
    words = ["服务", "端口", "数据库", "缓存", "超时", "版本", "部署", "负责人", "连接池", "日志"]
    entries = [new_fact(f"{rng.choice(words)}{rng.choice(words)}配置 {i} 项 {rng.randrange(10**6)}", project=P)
               for i in range(10_000)]
    index = WriteIndex(entries)
    incoming = new_fact("计费服务新增配置项 abcdefgh_ijklmnop，默认关闭", project=P)
    assert len(index.candidates(entries, incoming, 0.8)) < 100
    assert find_conflicts(index.candidates(entries, incoming, 0.8), incoming) == find_conflicts(entries, incoming)


def test_the_file_keeps_its_index_across_writes_and_another_writers_changes(tmp_path):
    """Another process's write is a re-read: the index follows it, so its new entry conflicts."""
    ours = LongTermMemory(tmp_path, MemoryOptions(sync=False))
    theirs = LongTermMemory(tmp_path, MemoryOptions(sync=False))
    assert ours.save_fact("订单服务端口是 8080", scope="project", project_key=P).status.value == "STORED"
    index = ours.file.write_index()
    assert theirs.save_fact("网关超时是 30 秒", scope="project", project_key=P).status.value == "STORED"
    assert ours.save_fact("网关超时是 60 秒", scope="project", project_key=P).status.value == "CONFLICT"
    assert ours.delete(ours.entries()[0].id, P) is not None
    assert ours.save_fact("订单服务端口是 9090", scope="project", project_key=P).status.value == "STORED"
    assert ours.file.write_index() is index and len(index) == len(ours.entries()) == 2


def test_a_missing_file_empties_the_index(tmp_path):
    file = MemoryFile(tmp_path / "long_term_memory.json", sync=False)
    file.mutate(lambda entries: entries.append(new_fact("项目使用 Java 17", project=P)))
    assert len(file.write_index()) == 1
    file.path.unlink()
    assert file.read() == [] and len(file.write_index()) == 0
