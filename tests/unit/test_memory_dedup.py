"""Deduplication (reference k) with the reference's own examples."""

import threading

import pytest

from paicli.memory.longterm.dedup import canonicalize, find_duplicate, is_duplicate, same_domain
from paicli.memory.longterm.entry import Entry, new_fact
from paicli.memory.longterm.file import MemoryFile
from paicli.memory.longterm.writes import store


def _g(content: str) -> Entry:
    return new_fact(content, scope="global")


@pytest.mark.parametrize("a, b", [
    ("项目使用 Java 17", "项目使用 Java 17。"),
    ("Ｊａｖａ １７", "java17"),
    ("当前项目使用Java17开发", "当前项目使用的是Java17开发"),
    ("", "。，"),  # two empty canonicals are equal
])
def test_reference_duplicates(a, b):
    assert is_duplicate(_g(a), _g(b)) and is_duplicate(_g(b), _g(a))


@pytest.mark.parametrize("a, b", [
    ("项目使用 Java17", "项目使用 Java21"), ("用 C 写", "用 C++ 写"), ("界面用中文", "界面用繁体中文"),
    ("允许自动提交", "不允许自动提交"), ("👍", "👎"), ("C++ 和 Java", "C 和 Java++"), ("abc", ""),
])
def test_reference_distinct_entries(a, b):
    assert not is_duplicate(_g(a), _g(b))


def test_canonical_form_keeps_markers_in_place():
    assert canonicalize("项目使用 Java 17。") == "项目使用java17"
    assert canonicalize("v1.2 at a.b, end.") == "v1.2ata.bend"
    assert canonicalize("it's  ‘x’ 50% #1 a+b") == "it'sx50%#1a+b"  # quotes kept only between letters
    assert canonicalize(None) == ""


def test_dot_between_letters_only():
    assert canonicalize("config.yml") == "config.yml"
    assert canonicalize("end. next") == "endnext"


def test_nfkc_folds_compatibility_characters_first():
    assert canonicalize("x² ①") == "x21"


def test_variant_rule_needs_eight_code_points_and_the_ratio():
    assert not is_duplicate(_g("用Java17"), _g("用的是Java17"))  # shorter canonical has 7
    assert not is_duplicate(_g("当前使用Java17"), _g("当前使用的是的是Java17"))  # 10/14 < 0.82
    assert not is_duplicate(_g("当前项目使用Java17开发"), _g("当前项目使用了Java17开发"))  # 了 is no particle


def test_project_entries_need_the_same_non_blank_project():
    a, b = new_fact("x", project="/p"), new_fact("x", project="/p")
    assert same_domain(a, b)
    assert not same_domain(a, new_fact("x", project="/q")) and not same_domain(a, _g("x"))
    orphan = Entry("fact-1", "x", metadata={"scope": "project"})
    assert not is_duplicate(orphan, orphan)


def test_other_types_never_deduplicate_against_facts():
    legacy = Entry("c-1", "x", type="CONVERSATION")
    assert not is_duplicate(legacy, _g("x"))


def test_find_duplicate_returns_the_existing_entry():
    old = _g("项目使用 Java 17")
    assert find_duplicate([_g("别的"), old], _g("项目使用Java17。")) is old


def test_twelve_threads_storing_the_same_content_leave_one_entry(tmp_path):
    memory = MemoryFile(tmp_path / "m.json", sync=False)
    threads = [threading.Thread(target=lambda: MemoryFile(memory.path, sync=False).mutate(
        lambda entries: store(entries, _g("项目使用 Java 17")))) for _ in range(12)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(memory.read()) == 1
