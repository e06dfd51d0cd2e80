"""Issue 16: search terms proposed by the light model after a write, on a real memory file."""

import json
import threading
import time
from datetime import UTC, datetime, timedelta

from langchain_core.messages import AIMessage

from paicli.memory.longterm.enrichment import SEARCH_TERMS_KEY, Enricher, model_proposer, parse_terms, search_terms
from paicli.memory.longterm.entry import new_fact
from paicli.memory.longterm.file import FILE_NAME
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from tests.support.scripted_model import ScriptedChatModel
from tests.support.waiting import patience

P = "/work/proj"
NOW = datetime(2026, 9, 23, 8, tzinfo=UTC)
REPLY = json.dumps({"terms": ["主库", "primary database", "灯塔库"]}, ensure_ascii=False)


def _memory(tmp_path, propose=None, **kw) -> LongTermMemory:
    memory = LongTermMemory(tmp_path, MemoryOptions(sync=False))
    if propose is not None:
        memory.enricher = Enricher(propose, **kw)
    return memory


def _stored(tmp_path) -> list[dict]:
    return json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))


def test_a_save_stores_the_proposed_terms_and_search_uses_them(tmp_path):
    model = ScriptedChatModel([AIMessage(REPLY)])
    memory = _memory(tmp_path, model_proposer(model, "propose search terms"))
    saved = memory.save_fact("项目使用 PostgreSQL 15 作为数据库", scope="project", project_key=P).entry
    assert memory.enricher.wait_idle(5)
    [raw] = _stored(tmp_path)
    assert raw["metadata"][SEARCH_TERMS_KEY] == "主库 | primary database | 灯塔库"
    assert model.seen[0][1].content == "项目使用 PostgreSQL 15 作为数据库"  # the memory is the user message
    [entry] = memory.entries()
    assert search_terms(entry) == ["主库", "primary database", "灯塔库"]
    assert [s.entry.id for s in memory.search("灯塔库", P)] == [saved.id]  # a word only the terms hold


def test_terms_are_written_into_the_stored_object_keeping_fields_paicli_does_not_know(tmp_path):
    raw = {"id": "fact-1", "content": "前端构建工具是 Vite 5", "type": "FACT", "timestamp": "2026-01-01T00:00:00Z",
           "metadata": {"scope": "global", "team_label": 7}, "x-origin": {"tool": "other"}}
    (tmp_path / FILE_NAME).write_text(json.dumps([raw]), encoding="utf-8")
    memory = _memory(tmp_path, lambda content: '{"terms": ["bundler", "打包"]}')
    assert memory.enrich(memory.entries()[0]) and memory.enricher.wait_idle(5)
    [stored] = _stored(tmp_path)
    assert stored["x-origin"] == {"tool": "other"} and stored["metadata"]["team_label"] == 7
    assert stored["metadata"][SEARCH_TERMS_KEY] == "bundler | 打包"


def test_a_failing_or_unreadable_proposal_leaves_the_entry_as_it_was(tmp_path):
    replies = iter([RuntimeError("provider down"), "sure! here are some terms: a, b", '{"terms": "x"}'])

    def propose(content: str) -> str:
        reply = next(replies)
        if isinstance(reply, Exception):
            raise reply
        return reply

    memory = _memory(tmp_path, propose)
    for fact in ("构建用 Maven", "部署用 Helm", "测试用 pytest"):
        memory.save_fact(fact, scope="project", project_key=P)
    assert memory.enricher.wait_idle(5)
    assert all(SEARCH_TERMS_KEY not in e["metadata"] for e in _stored(tmp_path))
    memory.save_fact("日志用 logback", scope="project", project_key=P)  # the worker survived the failures
    assert memory.enricher.wait_idle(5)


def test_the_answer_is_not_delayed_by_a_slow_model(tmp_path):
    release = threading.Event()

    def slow(content: str) -> str:
        release.wait(10)
        return '{"terms": ["bundler"]}'

    memory = _memory(tmp_path, slow)
    start = time.perf_counter()
    result = memory.save_fact("前端构建工具是 Vite 5", scope="project", project_key=P)
    assert result.written and time.perf_counter() - start < 1.0  # the model is still "thinking"
    assert SEARCH_TERMS_KEY not in _stored(tmp_path)[0]["metadata"]
    release.set()
    assert memory.enricher.wait_idle(5)
    assert _stored(tmp_path)[0]["metadata"][SEARCH_TERMS_KEY] == "bundler"


def test_terms_for_an_entry_deleted_or_replaced_meanwhile_are_dropped(tmp_path):
    release = threading.Event()

    def slow(content: str) -> str:
        release.wait(10)
        return json.dumps({"terms": [f"for {content}"]}, ensure_ascii=False)

    memory = _memory(tmp_path, slow)
    gone = memory.save_fact("构建用 Maven", scope="project", project_key=P).entry
    kept = memory.save_fact("部署用 Helm", scope="project", project_key=P).entry
    memory.delete(gone.id, P)
    result = memory.replace_fact(kept.id, "部署用 Argo CD", P)
    release.set()
    assert memory.enricher.wait_idle(5)
    [stored] = _stored(tmp_path)
    assert stored["id"] == result.entry.id and stored["metadata"][SEARCH_TERMS_KEY] == "for 部署用 Argo CD"


def test_verify_and_extraction_ask_again_and_older_entries_are_enriched_lazily_within_a_bound(tmp_path):
    asked: list[str] = []

    def propose(content: str) -> str:
        asked.append(content)
        return '{"terms": ["t"]}'

    plain = _memory(tmp_path)  # written before enrichment existed
    facts = ("构建用 Maven", "部署用 Helm", "测试用 pytest", "日志用 logback", "缓存用 Redis", "队列用 Kafka")
    old = [plain.save_fact(fact, scope="project", project_key=P, now=NOW - timedelta(days=i)).entry
           for i, fact in enumerate(facts)]
    memory = _memory(tmp_path, propose, lazy_limit=4)
    memory.context_block("构建", 640, P)
    assert memory.enricher.wait_idle(5) and len(asked) == 3  # a few per turn
    memory.context_block("构建", 640, P)
    memory.context_block("构建", 640, P)
    assert memory.enricher.wait_idle(5) and len(asked) == 4  # and no more than the session's bound
    memory.verify(old[5].id, P)
    auto = new_fact("自动提取的事实", project=P, extra={"source": "auto_extracted"})
    memory.save_automatic([auto])
    assert memory.enricher.wait_idle(5) and asked[-2:] == ["队列用 Kafka", "自动提取的事实"]


def test_parse_terms_reads_only_a_json_list_and_cleans_each_term():
    assert parse_terms('{"terms": ["a|b", "  c\\u0000d ", "", 5, "x" ]}') == ["a b", "c d", "x"]
    assert parse_terms('["Vite", "bundler"]', content="前端构建工具是 Vite 5") == ["bundler"]  # already in it
    assert parse_terms("```json\n{\"terms\": [\"ci\"]}\n```") == ["ci"]
    assert parse_terms("not json") == parse_terms(None) == parse_terms('{"terms": "x"}') == []
    assert parse_terms(json.dumps(["y" * 41, "ok"])) == ["ok"]
    assert len(parse_terms(json.dumps([f"t{i}" for i in range(100)]))) == 24


def _enrich_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "paicli-enrich"]


def test_an_idle_worker_ends_its_thread_and_a_later_save_starts_another(tmp_path):
    """A process that outlives its sessions (Studio, the in-process test runner) must not keep one
    blocked worker thread per session."""
    before = set(_enrich_threads())
    memory = _memory(tmp_path, lambda content: REPLY, idle_exit=0.05)
    memory.save_fact("项目使用 PostgreSQL 15 作为数据库", scope="project", project_key=P)
    assert memory.enricher.wait_idle(5)
    deadline = time.monotonic() + patience(5)
    while set(_enrich_threads()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not set(_enrich_threads()) - before, "the idle worker is still running"
    memory.save_fact("前端构建用 Vite 5", scope="project", project_key=P)
    assert memory.enricher.wait_idle(5)
    assert all(search_terms(e) for e in memory.entries())  # the second save was enriched too
