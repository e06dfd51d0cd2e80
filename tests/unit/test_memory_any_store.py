"""Issue 28 item 1: long-term memory over any LangGraph store gives what the file store gives.

``StoreEntries`` reads and writes a ``BaseStore`` only through ``batch``; paicli's rules run over
the items it reads. The recall set of issue 16 (``bench/recall_set.py``) ranks the same through an
``InMemoryStore`` as through ``long_term_memory.json``; dedup, conflicts, deletes and scope moves
come out the same; items a store holds that paicli cannot read are left alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore

from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.store import GLOBAL_NS, project_namespace
from paicli.memory.longterm.store_entries import memory_of
from paicli.memory.longterm.write_result import WriteStatus

BENCH = Path(__file__).resolve().parents[2] / "bench"
P = "/work/proj"


@pytest.fixture(scope="module")
def recall():
    sys.path.insert(0, str(BENCH))
    try:
        import memory_corpus
        import recall_set
    finally:
        sys.path.remove(str(BENCH))
    return recall_set.build(0), recall_set.questions(), memory_corpus.PROJECT, memory_corpus.NOW


def test_the_recall_set_ranks_the_same_through_an_in_memory_store_as_through_the_file(tmp_path, recall):
    data, questions, project, now = recall
    in_file = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    in_file.file.mutate(lambda entries: entries.extend(data.entries))
    in_store = memory_of(InMemoryStore())
    in_store.file.mutate(lambda entries: entries.extend(data.entries))
    assert {e.id for e in in_store.entries()} == {e.id for e in data.entries}
    for question, _names, _kind, _part in questions:
        expected = [s.entry.id for s in in_file.search(question, project, limit=5, now=now)]
        assert [s.entry.id for s in in_store.search(question, project, limit=5, now=now)] == expected, question
    budget = 640
    for question, *_ in questions[:40]:
        assert in_store.context_block(question, budget, project, now) == in_file.context_block(question, budget, project, now)


def test_writes_follow_the_same_rules_over_a_store_as_over_the_file(tmp_path):
    memories = [LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False)), memory_of(InMemoryStore())]
    outcomes = []
    for memory in memories:
        first = memory.save_fact("项目使用 pnpm 管理依赖", scope="project", project_key=P)
        statuses = [first.status,
                    memory.save_fact("项目使用 pnpm 管理依赖。", scope="project", project_key=P).status,
                    memory.save_fact("项目使用 npm 管理依赖", scope="project", project_key=P).status,
                    memory.replace_fact(first.entry.id, "项目使用 yarn 管理依赖", P).status,
                    memory.save_fact("默认用中文回答", scope="global", project_key=P).status]
        automatic = memory.save_automatic([new_fact("测试用 vitest", project=P),
                                           new_fact("项目使用 yarn 管理依赖", project=P)])
        outcomes.append((statuses, [e.content for e in automatic], sorted(e.content for e in memory.visible(P))))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0][:3] == [WriteStatus.STORED, WriteStatus.DUPLICATE, WriteStatus.CONFLICT]


def test_items_land_in_the_adapters_namespaces_and_deletes_remove_them():
    store = InMemoryStore()
    memory = memory_of(store)
    kept = memory.save_fact("默认用中文回答", scope="global", project_key=P).entry
    gone = memory.save_fact("构建用 Maven", scope="project", project_key=P).entry
    assert [i.key for i in store.search(GLOBAL_NS)] == [kept.id]
    assert [i.value["content"] for i in store.search(project_namespace(P))] == ["构建用 Maven"]
    assert memory.delete(gone.id, P) is not None
    assert store.search(project_namespace(P)) == []
    assert memory_of(store) is memory  # one memory object per store: its caches live with the store


def test_an_item_paicli_cannot_read_is_left_as_it_is():
    store = InMemoryStore()
    store.put(project_namespace(P), "foreign", {"note": "not a memory"})
    memory = memory_of(store)
    memory.save_fact("构建用 Maven", scope="project", project_key=P)
    assert [e.content for e in memory.entries()] == ["构建用 Maven"]
    assert store.get(project_namespace(P), "foreign").value == {"note": "not a memory"}
