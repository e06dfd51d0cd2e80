"""Write paths (reference j.4) and their user-facing texts (j.5)."""

from datetime import UTC, datetime, timedelta

from paicli.memory.longterm.entry import Entry, content_id, new_fact
from paicli.memory.longterm.writes import delete, mark_verified, store, write_automatic, write_explicit
from paicli.memory.longterm.write_result import WriteStatus

T0 = datetime(2026, 9, 23, 8, tzinfo=UTC)
P = "/work/proj"


def _p(content, ident=None, day=0, **kw):
    e = new_fact(content, project=P, now=T0 + timedelta(days=day), **kw)
    return Entry(ident or e.id, e.content, e.type, e.timestamp, e.last_verified_at, e.metadata)


def test_stored_text():
    entries = []
    result = write_explicit(entries, _p("项目使用 Java 17"), project_key=P)
    assert result.status is WriteStatus.STORED and len(entries) == 1
    assert result.describe(UTC) == "💾 已保存到长期记忆(project): 项目使用 Java 17"


def test_duplicate_refreshes_the_existing_entry_and_drops_pending():
    old = Entry("fact-old", "项目使用 Java 17", timestamp=T0,
                metadata={"scope": "project", "project": P, "verification_pending": "true"})
    entries = [old]
    result = write_explicit(entries, _p("项目使用Java17。", day=5), project_key=P)
    assert result.status is WriteStatus.DUPLICATE and len(entries) == 1
    assert entries[0].last_verified_at == T0 + timedelta(days=5) and not entries[0].verification_pending
    assert result.describe(UTC) == "💾 长期记忆中已有等价条目 fact-old，未重复写入，已刷新其核实时间: 项目使用 Java 17"


def test_conflict_writes_nothing_and_tells_the_user_how_to_choose():
    entries = [_p("项目使用 Java 17", "fact-17")]
    result = write_explicit(entries, _p("项目使用 Java 21", day=3), project_key=P)
    assert result.status is WriteStatus.CONFLICT and len(entries) == 1
    assert result.describe(UTC) == (
        "⚠️ 未写入：新内容与已有长期记忆高度相似但不一致，可能是同一事实的新旧版本。\n"
        "  已有 fact-17（写入 2026-09-23，最后核实 2026-09-23）: 项目使用 Java 17\n"
        "  新的: 项目使用 Java 21\n"
        "请让用户选择保留哪一条：\n"
        "  - 保留已有：无需操作\n"
        "  - 改用新的：/memory replace fact-17 项目使用 Java 21（或调用 save_memory 并传 replace_id=fact-17）\n"
        "  - 两条都保留：/save --force 项目使用 Java 21")


def test_conflict_text_adds_global_flag_for_global_scope():
    entries = [new_fact("服务端口是 8080", scope="global", now=T0)]
    text = write_explicit(entries, new_fact("服务端口是 9090", scope="global", now=T0)).describe(UTC)
    assert text.endswith("  - 两条都保留：/save --force --global 服务端口是 9090")


def test_force_keeps_both():
    entries = [_p("项目使用 Java 17")]
    result = write_explicit(entries, _p("项目使用 Java 21"), allow_conflict=True, project_key=P)
    assert result.status is WriteStatus.STORED and len(entries) == 2


def test_replace_text_and_effect():
    entries = [_p("项目使用 Java 17", "fact-17")]
    new = _p("项目使用 Java 21", "fact-21")
    result = write_explicit(entries, new, replace_id="fact-17", project_key=P)
    assert result.status is WriteStatus.REPLACED and entries == [new]
    assert result.describe(UTC) == ("💾 已用新内容替换长期记忆 fact-17(project)\n"
                                    "  旧: 项目使用 Java 17\n  新: 项目使用 Java 21 (fact-21)")


def test_replace_is_blocked_by_a_third_conflicting_entry():
    entries = [_p("项目使用 Java 17", "fact-17"), _p("项目使用 Java 21", "fact-21")]
    result = write_explicit(entries, _p("项目使用 Java 25"), replace_id="fact-17", project_key=P)
    assert result.status is WriteStatus.CONFLICT and [e.id for e in result.conflicts] == ["fact-21"]
    assert len(entries) == 2


def test_replace_target_must_be_visible():
    entries = [new_fact("x", project="/other", now=T0)]
    result = write_explicit(entries, _p("y"), replace_id=entries[0].id, project_key=P)
    assert result.status is WriteStatus.REPLACE_TARGET_NOT_FOUND and len(entries) == 1
    assert result.describe() == f"❌ 未写入：要替换的长期记忆 {entries[0].id} 不存在或不在当前项目可见范围内。"


def test_duplicate_of_another_entry_removes_the_replace_target():
    entries = [_p("项目使用 Java 17", "fact-a"), _p("服务端口是 8080", "fact-b")]
    result = write_explicit(entries, _p("服务端口是8080。"), replace_id="fact-a", project_key=P)
    assert result.status is WriteStatus.DUPLICATE and [e.id for e in entries] == ["fact-b"]


def test_automatic_writes_skip_duplicates_conflicts_and_the_same_fact_again():
    entries = [_p("项目使用 Java 17", "fact-17")]
    assert not write_automatic(entries, _p("项目使用 Java 21"))
    assert not write_automatic(entries, _p("项目使用Java17"))
    assert write_automatic(entries, _p("别的事实")) and len(entries) == 2
    assert not write_automatic(entries, _p("别的事实"))  # this very fact again (its id and text)


def test_a_fact_whose_id_another_entry_holds_gets_the_next_id_of_its_series():
    # An older random id (or a hash collision) is never replaced: the new fact moves along.
    held = _p("别的事实").id
    entries = [_p("项目使用 Java 17", held)]
    assert write_automatic(entries, _p("别的事实"))
    assert write_explicit(entries, _p("第三个事实", entries[0].id), project_key=P).written
    ids = [e.id for e in entries]
    assert len(set(ids)) == 3 and ids[0] == held and entries[0].content == "项目使用 Java 17"
    assert ids[1] == content_id("别的事实", scope="project", project=P, attempt=1)


def test_store_skips_duplicates_but_not_conflicts():
    entries = [_p("项目使用 Java 17", "fact-a")]
    assert not store(entries, _p("项目使用 Java 17。", "fact-b"))
    assert store(entries, _p("项目使用 Java 21")) and len(entries) == 2
    assert store(entries, _p("项目使用 Java 21。"))  # the same key (the same fact): replaced in place
    assert len(entries) == 2 and entries[1].content == "项目使用 Java 21。"


def test_mark_verified_and_delete():
    entries = [_p("x", "fact-1")]
    later = T0 + timedelta(days=40)
    assert mark_verified(entries, "fact-1", later).last_verified_at == later
    assert mark_verified(entries, "nope", later) is None
    assert delete(entries, "fact-1", "/elsewhere") is None and delete(entries, "fact-1", P) is not None
    assert entries == []
