"""Retrieval and the injected block (reference p; scoring per p.3's suggested port, Q15)."""

import time
from datetime import UTC, datetime, timedelta

import pytest

from paicli.memory.longterm.entry import Entry, new_fact
from paicli.memory.longterm.retriever import HEADER, Retriever, decay, format_block
from paicli.memory.longterm.terms import terms

NOW = datetime(2026, 9, 23, 8, tzinfo=UTC)
P = "/work/proj"


def _e(content, days_old=0, project=P, **kw):
    return new_fact(content, project=project, now=NOW - timedelta(days=days_old), **kw)


def test_terms_are_lowercased_and_skip_punctuation_and_question_words():
    found = terms("项目 用 Java 17, Java 17！ -- ... 用什么")
    assert found["java"] == 2 and found["17"] == 2 and "项目" in found
    assert not any(t in found for t in ("--", "...", "什么", "，"))


def test_decay_falls_with_days_down_to_a_floor():
    assert decay(NOW, NOW) == 1.0
    assert decay(NOW - timedelta(days=10), NOW) == pytest.approx(0.75)
    assert decay(NOW - timedelta(days=30), NOW) == pytest.approx(0.7)  # the floor (0.5 would be reached here)
    assert decay(NOW - timedelta(days=300), NOW) == pytest.approx(0.7)
    assert decay(NOW - timedelta(days=1), NOW) > decay(NOW - timedelta(days=2), NOW)


def test_rank_prefers_relevant_then_recent_and_filters_by_project():
    entries = [_e("项目使用 Java 17", 100), _e("项目使用 Java 17 和 Maven"), _e("部署到 k8s 集群"),
               _e("Java 是别的项目的", project="/other"), _e("全局：Java 代码用四空格缩进", scope="global")]
    ranked = Retriever().rank(entries, "java 17", P, NOW)
    contents = [s.entry.content for s in ranked]
    assert contents[0] == "项目使用 Java 17 和 Maven"  # both match whole; the newer wins
    assert "Java 是别的项目的" not in contents and "部署到 k8s 集群" not in contents
    assert "全局：Java 代码用四空格缩进" in contents


def test_rank_keeps_top_ten():
    entries = [_e(f"Java 规则 {i}") for i in range(25)]
    assert len(Retriever().rank(entries, "java 规则", P, NOW)) == 10


def test_nothing_relevant_gives_an_empty_block():
    assert Retriever().build_context([_e("部署到 k8s 集群")], "咖啡", 640, P, NOW) == ""
    assert Retriever().build_context([], "java", 640, P, NOW) == ""


def test_block_format_matches_the_reference():
    fresh = Entry("fact-1", "项目使用 Java 17", timestamp=NOW - timedelta(days=2),
                  last_verified_at=NOW - timedelta(days=1), metadata={"scope": "global"})
    pending = Entry("fact-2", "Java 代码用四空格缩进", timestamp=NOW - timedelta(days=40),
                    metadata={"scope": "global", "verification_pending": "true"})
    block = format_block([pending, fresh], 640, NOW, 30, UTC)
    assert block == HEADER + (
        "- [FACT][自动提取，待核实][可能已过时] Java 代码用四空格缩进（写入 2026-08-14，尚未经用户核实，"
        "已超过 30 天未核实，使用前必须先核实）\n"
        "- [FACT] 项目使用 Java 17（写入 2026-09-21，最后核实 2026-09-22）\n\n")
    assert block.startswith("## 相关长期记忆\n\n以下记忆是线索而不是事实；")


def test_stale_days_setting_appears_in_the_clause():
    old = Entry("fact-1", "x", timestamp=NOW - timedelta(days=10), metadata={"scope": "global"})
    assert "已超过 7 天未核实" in format_block([old], 640, NOW, 7, UTC)
    assert "[可能已过时]" not in format_block([old], 640, NOW, 0, UTC)


def test_file_staleness_has_its_own_clause(tmp_path):
    linked = _e("构建脚本在 build.sh", project=str(tmp_path), extra={"source_files": "build.sh"})
    line = format_block([linked], 640, NOW, 30, UTC)
    assert "[可能已过时]" in line and "关联文件在核实后已修改" in line


def test_budget_stops_at_the_first_entry_that_does_not_fit():
    small, big, tiny = _e("aaaa"), _e("b" * 400), _e("cccc")  # 1, 100, 1 tokens
    block = format_block([small, big, tiny], 50, NOW, 30, UTC)
    assert "aaaa" in block and "bbbb" not in block and "cccc" not in block  # a break, not a skip
    assert format_block([big], 50, NOW, 30, UTC) == ""


def test_lines_already_shown_are_left_out_and_cost_no_budget():
    shown_entry, big, other = _e("aaaa"), _e("b" * 160), _e("cccc")  # 1, 40, 1 tokens
    shown = {format_block([shown_entry], 640, NOW, 30, UTC).splitlines()[-2]}
    block = format_block([shown_entry, big, other], 41, NOW, 30, UTC, shown=shown)
    assert "aaaa" not in block and "b" * 160 in block and "cccc" in block
    assert format_block([shown_entry], 640, NOW, 30, UTC, shown=shown) == ""


def test_a_shown_memory_whose_marks_changed_comes_again():
    fresh, old = _e("部署脚本在 deploy.sh"), _e("部署脚本在 deploy.sh", days_old=40)
    shown = {format_block([fresh], 640, NOW - timedelta(days=40), 30, UTC).splitlines()[-2]}
    assert "[可能已过时]" in format_block([old], 640, NOW, 30, UTC, shown=shown)


def test_header_does_not_count_against_the_budget():
    assert "aaaa" in format_block([_e("aaaa")], 1, NOW, 30, UTC)


def test_search_over_ten_thousand_memories_is_fast_once_warm():
    entries = [_e(f"记忆 {i} 关于 模块{i % 97} 的 配置 value{i}") for i in range(10_000)]
    retriever = Retriever()
    retriever.rank(entries, "模块5 配置", P, NOW)
    start = time.perf_counter()
    ranked = retriever.rank(entries, "模块5 配置", P, NOW)
    assert ranked and time.perf_counter() - start < 1.0  # loose bound; bench/ measures the real p50
