"""The retriever's term cache beside the memory file (issue 30): the first search of a process
reads each unchanged memory's terms from ``long_term_memory.terms.npz`` instead of cutting it
with jieba, and ranks exactly as a retriever that cut everything."""

import random
import warnings
import zipfile
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from paicli.memory.longterm.document import dump
from paicli.memory.longterm.enrichment import SEARCH_TERMS_KEY
from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.file import FILE_NAME
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.retriever import Retriever
from paicli.memory.longterm.term_cache import FILE_NAME as TERMS_NAME

NOW = datetime(2026, 11, 29, 9, tzinfo=UTC)
P = "/home/dev/shop"
SUBJECTS = ["发票服务", "支付网关", "报表服务", "billing-api", "推荐服务", "用户中心", "Redis", "订单系统"]
FACTS = ["监听 {n} 端口", "的负责人是{who}", "部署在 k8s 集群，副本数 {n}", "uses Postgres {n}.4 as its database",
         "的日志保留 {n} 天", "超时默认 {n} 秒，重试 3 次", "caches sessions for {n} minutes", "依赖 Kafka 做异步通知"]
QUERIES = ["发票服务端口", "谁负责支付网关", "billing-api database version", "日志保留多久", "Redis 会话过期",
           "推荐服务部署在哪里", "超时和重试", "kafka 通知", "数据库", "k8s 副本"]


def corpus(n: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text = rng.choice(SUBJECTS) + rng.choice(FACTS).format(n=rng.randint(2, 9000), who=rng.choice("甲乙丙丁"))
        extra = {SEARCH_TERMS_KEY: "端口|port"} if i % 5 == 0 else None
        out.append(new_fact(f"{text} #{i}", project=P if i % 3 else None, scope="global" if i % 3 == 0 else "project",
                            now=NOW - timedelta(days=rng.randint(0, 400)), extra=extra))
    return out


def rankings(rank) -> list:
    return [[(s.entry.id, s.score) for s in rank(q)] for q in QUERIES]


def fresh(directory) -> LongTermMemory:
    """A new LongTermMemory: what a new process has (its own retriever, nothing cut yet)."""
    return LongTermMemory(directory, MemoryOptions(sync=False))


def uncached(memory: LongTermMemory) -> list:
    """The rankings of a retriever that cuts every memory itself."""
    retriever, entries = Retriever(), memory.entries()
    return rankings(lambda q: retriever.rank(entries, q, P, NOW, 10))


def cached(memory: LongTermMemory) -> list:
    return rankings(lambda q: memory.search(q, P, 10, now=NOW))


@pytest.fixture
def home(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(dump(corpus(300)))
    return tmp_path


def test_a_new_process_reads_the_terms_instead_of_cutting_and_ranks_the_same(home):
    first = fresh(home)
    assert cached(first) == uncached(first)
    assert first.retriever.cut == 300 and (home / TERMS_NAME).is_file()
    second = fresh(home)
    assert cached(second) == uncached(second)
    assert second.retriever.cut == 0


def test_only_what_another_process_changed_is_cut_again(home):
    cached(fresh(home))
    other = fresh(home)
    other.save_fact("发票服务新增配置项 retry_budget，默认关闭", scope="project", project_key=P)
    other.file.mutate(lambda entries: entries.pop(0) and None)  # and one memory is gone
    later = fresh(home)
    assert cached(later) == uncached(later)
    assert later.retriever.cut == 1


def test_rows_of_memories_deleted_elsewhere_leave_no_trace_in_the_ranking(home):
    """The cache still holds terms only a deleted memory had: they must not change the scores
    (a term the vocabulary knows but no memory holds would count against every memory)."""
    cached(fresh(home))
    doomed = new_fact("发票服务 端口 billing-api database 超时 会话 数据库 日志", project=P)
    writer = fresh(home)
    writer.file.mutate(lambda entries: entries.append(doomed))
    cached(fresh(home))  # the cache now has its row
    writer.file.mutate(lambda entries: entries.remove(next(e for e in entries if e.id == doomed.id)))
    later = fresh(home)
    assert cached(later) == uncached(later)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other rules", "wrong shape", "empty", "nan", "negative"])
def test_an_unusable_cache_is_rebuilt_quietly_and_loses_nothing(home, damage, capsys):
    cached(fresh(home))
    path, before = home / TERMS_NAME, (home / FILE_NAME).read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00not a cache\xff" * 100)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:5000])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        with np.load(path) as data:
            arrays = dict(data)
        if damage == "other rules":
            arrays["fingerprint"] = np.zeros(16, np.uint8)
        elif damage == "nan":  # a term frequency no save writes: every score would be NaN
            arrays["tfs"][0] = np.nan
        elif damage == "negative":
            arrays["lengths"][0] = -1.0
        else:
            arrays["offsets"] = arrays["offsets"][::-1].copy()
        np.savez(path, **arrays)
    memory = fresh(home)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cached(memory) == uncached(memory)
    assert memory.retriever.cut == 300  # one rebuild
    assert capsys.readouterr() == ("", "")
    assert (home / FILE_NAME).read_bytes() == before
    assert zipfile.is_zipfile(path) and fresh(home).search("发票服务端口", P) and True
    again = fresh(home)
    cached(again)
    assert again.retriever.cut == 0  # rewritten whole


def test_a_directory_in_the_way_only_costs_the_cut(home):
    (home / TERMS_NAME).mkdir()
    memory = fresh(home)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cached(memory) == uncached(memory)
    assert (home / TERMS_NAME).is_dir()


def test_delete_and_clear_take_the_cache_with_them(home):
    memory = fresh(home)
    cached(memory)
    victim = next(e for e in memory.entries() if e.scope == "project")
    assert memory.delete(victim.id, P) is not None
    assert not (home / TERMS_NAME).exists()
    cached(memory)  # the next search writes it again, without the deleted memory's row
    later = fresh(home)
    cached(later)
    assert later.retriever.cut == 0 and victim.id not in {s.entry.id for s in later.search("发票服务", P, 300)}
    assert len(memory.clear(memory.entries())) == 299
    assert not (home / TERMS_NAME).exists()


def test_a_search_while_a_writer_holds_the_lock_does_not_wait_and_writes_no_cache(home):
    memory = fresh(home)
    with memory.file.side_lock() as held:
        assert held
        other = fresh(home)  # another "process" (its own lock object on the same path in this one)
        assert cached(other) == uncached(other)
    assert not (home / TERMS_NAME).exists()
    cached(fresh(home))
    assert (home / TERMS_NAME).exists()


def test_store_searches_over_the_file_rank_the_same_and_write_no_partial_cache(home):
    from paicli.memory.longterm.store import MemoryStore, project_namespace

    store = MemoryStore(fresh(home))
    found = store.search(project_namespace(P), query="发票服务端口", limit=5)
    assert found and not (home / TERMS_NAME).exists()


@pytest.mark.parametrize("n_terms", [50, 70_000, 3_000_000])
def test_the_index_orders_postings_as_a_stable_sort_at_any_vocabulary_size(n_terms):
    from paicli.memory.longterm.lexical import _stable_order

    ids = np.random.default_rng(n_terms).integers(0, n_terms, 50_000)
    assert np.array_equal(_stable_order(ids, n_terms), np.argsort(ids, kind="stable"))
