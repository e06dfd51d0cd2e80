"""MemoryStore: LangGraph's store API over long_term_memory.json."""

from __future__ import annotations

import json

import pytest
from langgraph.store.base import InvalidNamespaceError

from paicli.memory.longterm.manager import MemoryOptions
from paicli.memory.longterm.store import GLOBAL_NS, open_store, project_key_of, project_label, project_namespace


@pytest.fixture
def store(tmp_path):
    return open_store(tmp_path, MemoryOptions(sync=False))


def test_put_get_round_trip_writes_paicli_entries(store, tmp_path):
    ns = project_namespace("/home/me/app.v2")
    store.put(ns, "fact-00000001", {"content": "项目使用 Java 17"})
    item = store.get(ns, "fact-00000001")
    assert item.value["content"] == "项目使用 Java 17" and item.namespace == ns
    [raw] = json.loads((tmp_path / "long_term_memory.json").read_text(encoding="utf-8"))
    assert list(raw) == ["id", "content", "type", "timestamp", "lastVerifiedAt", "metadata", "tokenCount"]
    assert raw["metadata"] == {"source": "fact", "scope": "project", "project": "/home/me/app.v2"}


def test_project_labels_round_trip_dots_and_percents():
    key = "/home/a.b/50%.x"
    assert "." not in project_label(key) and project_key_of(project_label(key)) == key


def test_search_by_namespace_prefix_filter_and_query(store):
    store.put(GLOBAL_NS, "fact-g", {"content": "默认用中文回答"})
    store.put(project_namespace("/p"), "fact-a", {"content": "构建工具使用 Maven"})
    store.put(project_namespace("/p"), "fact-b", {"content": "服务端口是 8080"})
    store.put(project_namespace("/q"), "fact-c", {"content": "构建工具使用 Gradle"})
    assert [i.key for i in store.search(("memories",))] == ["fact-g", "fact-a", "fact-b", "fact-c"]
    assert [i.key for i in store.search(project_namespace("/p"))] == ["fact-a", "fact-b"]
    hits = store.search(("memories", "project"), query="Maven 构建")
    assert hits[0].key == "fact-a" and hits[0].score > 0
    assert all(h.key != "fact-g" for h in hits)  # a namespace prefix, not project visibility
    assert [i.key for i in store.search(("memories",), filter={"metadata": {"scope": "global"}})] == ["fact-g"]
    assert [i.key for i in store.search(("memories",), limit=2, offset=1)] == ["fact-a", "fact-b"]


def test_list_namespaces(store):
    store.put(GLOBAL_NS, "fact-g", {"content": "默认用中文回答"})
    store.put(project_namespace("/p"), "fact-a", {"content": "构建工具使用 Maven"})
    assert store.list_namespaces() == [GLOBAL_NS, project_namespace("/p")]
    assert store.list_namespaces(max_depth=2) == [GLOBAL_NS, ("memories", "project")]
    assert store.list_namespaces(suffix=("global",)) == [GLOBAL_NS]


def test_put_none_deletes_and_update_keeps_created_at(store):
    ns = project_namespace("/p")
    store.put(ns, "fact-a", {"content": "构建工具使用 Maven"})
    created = store.get(ns, "fact-a").created_at
    store.put(ns, "fact-a", {"content": "构建工具使用 Maven 3.9"})
    item = store.get(ns, "fact-a")
    assert item.value["content"] == "构建工具使用 Maven 3.9" and item.created_at == created
    store.delete(ns, "fact-a")
    assert store.get(ns, "fact-a") is None


def test_put_is_the_low_level_store_and_skips_duplicates(store):
    ns = project_namespace("/p")
    store.put(ns, "fact-a", {"content": "项目使用 Java 17"})
    store.put(ns, "fact-b", {"content": "项目使用Java17。"})  # reference (k): equivalent
    assert [i.key for i in store.search(ns)] == ["fact-a"]


def test_only_memory_namespaces_are_accepted(store):
    with pytest.raises(InvalidNamespaceError):
        store.put(("notes",), "k", {"content": "x"})
    with pytest.raises(ValueError):
        store.put(GLOBAL_NS, "k", {"text": "no content"})


async def test_async_api_runs_off_the_event_loop(store):
    await store.aput(GLOBAL_NS, "fact-g", {"content": "默认用中文回答"})
    assert (await store.aget(GLOBAL_NS, "fact-g")).value["content"] == "默认用中文回答"
    assert [i.key for i in await store.asearch(("memories",), query="中文")] == ["fact-g"]
