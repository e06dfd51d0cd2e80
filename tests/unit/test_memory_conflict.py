"""Conflict detection (reference l) with the reference's examples and threshold rules."""

from datetime import UTC, datetime

import pytest

from paicli.memory.longterm.conflict import bigram_dice, find_conflicts, is_conflict, is_numeric_variant
from paicli.memory.longterm.config import parse_threshold
from paicli.memory.longterm.dedup import canonicalize
from paicli.memory.longterm.entry import new_fact
from tests.support.properties import examples


def _g(content, day=1):
    return new_fact(content, scope="global", now=datetime(2026, 9, day, tzinfo=UTC))


@pytest.mark.parametrize("a, b", [("项目使用 Java 17", "项目使用 Java 21"), ("服务端口是 8080", "服务端口是 9090")])
def test_numeric_variants_conflict(a, b):
    assert is_numeric_variant(canonicalize(a), canonicalize(b))
    assert is_conflict(_g(a), _g(b))


def test_numeric_variant_needs_a_number_and_the_same_rest():
    assert not is_numeric_variant("abc", "abc")
    assert not is_numeric_variant("java17", "kotlin17")
    assert is_numeric_variant("v1.2.3", "v10")


def test_mvn_example_conflicts_at_08_but_not_at_099():
    a, b = _g("提交代码前必须运行 mvn test -Pquick 回归"), _g("提交代码前必须运行 mvn test -Pquick 全量回归")
    assert bigram_dice(canonicalize(a.content), canonicalize(b.content)) >= 0.8
    assert is_conflict(a, b, 0.8) and not is_conflict(a, b, 0.99)


def test_dice_counts_bigram_multisets():
    assert bigram_dice("aaa", "aa") == pytest.approx(2 * 1 / 3)
    assert bigram_dice("a", "ab") == 0.0
    assert bigram_dice("abcd", "abcd") == 1.0


def test_duplicates_and_other_domains_are_not_conflicts():
    assert not is_conflict(_g("项目使用 Java 17"), _g("项目使用Java17。"))
    assert not is_conflict(new_fact("项目使用 Java 17", project="/p"), _g("项目使用 Java 21"))
    assert not is_conflict(_g("。"), _g("项目使用 Java 21"))


def test_literal_check_misses_paraphrases():
    assert not is_conflict(_g("构建用 Maven"), _g("不用 Gradle"))


def test_find_conflicts_sorts_oldest_first():
    late, early = _g("项目使用 Java 21", day=20), _g("项目使用 Java 11", day=2)
    assert find_conflicts([late, _g("无关"), early], _g("项目使用 Java 17")) == [early, late]


@pytest.mark.parametrize("text, value", [
    ("0.9", 0.9), ("1", 1.0), (" 0.5 ", 0.5), ("0", 0.8), ("1.5", 0.8), ("-1", 0.8), ("x", 0.8), (None, 0.8),
])
def test_threshold_must_be_in_zero_one(text, value):
    assert parse_threshold(text) == value


from hypothesis import given, settings, strategies as st  # noqa: E402

_texts = st.text(alphabet="项目使用Java1728 .的是", min_size=0, max_size=14)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_texts, max_size=8), _texts, st.sampled_from([0.5, 0.8, 0.99]))
def test_the_fast_scan_finds_exactly_what_is_conflict_finds(existing, incoming, threshold):
    entries = [new_fact(t, scope="global") for t in existing]
    new = new_fact(incoming, scope="global")
    expected = sorted((e for e in entries if is_conflict(e, new, threshold)), key=lambda e: e.timestamp)
    assert find_conflicts(entries, new, threshold) == expected
