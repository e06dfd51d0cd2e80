"""Issue 35's memory pieces without a database: the key a fact gets, personal and shared global
memory over a store, what ``/memory clear`` may remove, moving memories between the file and a
database (``paicli.memory.longterm.transfer``), and the one line for a database that went away."""

from __future__ import annotations

import json

import psycopg
import pytest
from langgraph.store.memory import InMemoryStore

from paicli.memory.longterm.entry import OWNER_KEY, content_id, new_fact
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.store import GLOBAL_NS, project_namespace, user_namespace
from paicli.memory.longterm.store_entries import StoreEntries, changes, memory_of
from paicli.memory.longterm.transfer import merge, owned_by, rekey, with_metadata
from paicli.memory.longterm.writes import write_explicit
from paicli.run.database_errors import describe, failure_line

P, Q = "/work/proj", "/work/other"


# -- the key -------------------------------------------------------------------------------------
def test_the_same_fact_gets_the_same_key_and_another_place_another_key():
    key = content_id("项目使用 Java 17", scope="project", project=P)
    assert key.startswith("fact-") and len(key) == 13
    assert content_id("项目使用Ｊａｖａ１７。", scope="Project", project=P) == key  # the canonical text (reference k)
    assert new_fact("项目使用 Java 17", project=P).id == key
    others = {content_id("项目使用 Java 21", scope="project", project=P), content_id("项目使用 Java 17", scope="project", project=Q),
              content_id("项目使用 Java 17", scope="global"), content_id("项目使用 Java 17", scope="project", project=P, attempt=1)}
    assert key not in others and len(others) == 4
    assert content_id("默认用中文", scope="global", project=P) == content_id("默认用中文", scope="global")


def test_two_writers_that_miss_each_other_still_store_one_item_for_one_fact():
    # The lock is what makes a writer see the other; even a write that raced past it (both read an
    # empty store, both decided to store) lands on one key: the same fact is the same item.
    store = InMemoryStore()
    readers = [StoreEntries(store), StoreEntries(store)]
    seen = [reader.read() for reader in readers]  # both read before either writes
    for before in seen:
        after = list(before)
        assert write_explicit(after, new_fact("项目使用 pnpm 管理依赖", project=P), project_key=P).written
        store.batch(changes(before, after))
    assert len(store.search(("memories",))) == 1


# -- personal and shared -------------------------------------------------------------------------
def test_global_memories_over_a_personal_store_are_the_users_and_old_shared_ones_stay_visible():
    store = InMemoryStore()
    store.put(GLOBAL_NS, "fact-legacy1", {"content": "团队旧约定：提交前跑测试"})  # written before issue 35
    alice = LongTermMemory(None, entries=StoreEntries(store, owner="alice"))
    bob = LongTermMemory(None, entries=StoreEntries(store, owner="bob.smith"))
    assert alice.owner == "alice" and memory_of(store).owner is None  # not a database: one shared namespace
    saved = alice.save_fact("回答用中文", scope="global", project_key=P)
    assert saved.entry.metadata[OWNER_KEY] == "alice"
    bob.save_fact("回答用英文", scope="global", project_key=P)
    team = alice.save_fact("项目用 pnpm", scope="project", project_key=P)
    assert store.get(user_namespace("alice"), saved.entry.id).value["content"] == "回答用中文"
    assert user_namespace("bob.smith") == ("memories", "user", "bob%2Esmith")
    assert sorted(e.content for e in alice.visible(P)) == ["回答用中文", "团队旧约定：提交前跑测试", "项目用 pnpm"]
    assert sorted(e.content for e in bob.visible(P)) == ["回答用英文", "团队旧约定：提交前跑测试", "项目用 pnpm"]
    assert team.entry.id in {e.id for e in bob.visible(P)}  # the project's, everyone's
    # Clearing is what one sees: alice's global and the shared one, never bob's.
    gone = alice.clear(alice.clearable(P, include_global=True))
    assert sorted(e.content for e in gone) == ["回答用中文", "团队旧约定：提交前跑测试", "项目用 pnpm"]
    assert [e.content for e in bob.visible(P)] == ["回答用英文"]


def test_clearable_is_this_projects_memories_and_global_ones_only_when_asked(tmp_path):
    memory = LongTermMemory(tmp_path, MemoryOptions(sync=False))
    for text, scope, key in (("一", "project", P), ("二", "global", P), ("三", "project", Q)):
        memory.save_fact(f"第{text}条记忆", scope=scope, project_key=key)
    assert [e.content for e in memory.clearable(P)] == ["第一条记忆"]
    assert [e.content for e in memory.clearable(P, include_global=True)] == ["第一条记忆", "第二条记忆"]
    shown = memory.clearable(P)
    memory.save_fact("第四条记忆", scope="project", project_key=P)  # written after the question
    assert [e.content for e in memory.clear(shown)] == ["第一条记忆"]
    assert sorted(e.content for e in memory.entries()) == ["第三条记忆", "第二条记忆", "第四条记忆"]


# -- moving between the file and a database ----------------------------------------------------
def test_rekey_owned_by_and_merge_move_memories_and_add_each_once():
    read = new_fact("项目用 pnpm", project="/home/me/shop")
    raw_read = with_metadata(read, {})  # unchanged: the same object
    assert raw_read is read
    stored = type(read)(read.id, read.content, read.type, read.timestamp, read.last_verified_at, read.metadata,
                        raw={"id": read.id, "content": read.content, "metadata": dict(read.metadata), "x-extra": 1})
    personal = new_fact("回答用中文", scope="global")
    moved, ids = rekey([stored, personal], {"/home/me/shop": "github.com/acme/shop"})
    assert ids == {read.id} and moved[0].project == "github.com/acme/shop"
    assert moved[0].raw["metadata"]["project"] == "github.com/acme/shop" and moved[0].raw["x-extra"] == 1
    mine = owned_by(moved, "alice")
    assert mine[1].metadata[OWNER_KEY] == "alice" and OWNER_KEY not in mine[0].metadata
    assert OWNER_KEY not in owned_by(mine, None)[1].metadata
    target = [new_fact("项目用pnpm。", project="github.com/acme/shop")]  # a duplicate under another id
    target[0] = type(target[0])("fact-other001", *(getattr(target[0], f) for f in ("content", "type", "timestamp",
                                                                                 "last_verified_at", "metadata")))
    counts = merge(target, mine)
    assert (len(counts.added), counts.present) == (1, 1) and [e.content for e in counts.added] == ["回答用中文"]
    assert (len(merge(target, mine).added), merge(target, mine).present) == (0, 2)  # idempotent


# -- a database that went away ------------------------------------------------------------------
def test_a_lost_connection_is_one_line_and_other_database_errors_are_not():
    lost = psycopg.OperationalError("server closed the connection unexpectedly\n\tThis probably means")
    assert failure_line(RuntimeError("not the database")) is None
    try:
        try:
            raise lost
        except psycopg.OperationalError as inner:
            raise RuntimeError("a node failed") from inner
    except RuntimeError as outer:
        line = failure_line(outer)
    assert line is not None and "\n" not in line and line.startswith("❌ 数据库 ")
    assert "server closed the connection unexpectedly This probably means" in line
    assert failure_line(psycopg.errors.AdminShutdown("terminating connection")) is not None
    assert failure_line(psycopg.errors.DeadlockDetected("deadlock detected")) is None  # the server answered
    assert describe("postgresql://me:secret@db.internal:6543/shop") == "shop@db.internal:6543"
    assert "secret" not in describe("postgresql://me:secret@db.internal/shop")


@pytest.mark.parametrize("value, ok", [("alice", True), ("  bob  ", True), ("a\x1bb", False), ("x" * 129, False)])
def test_paicli_user_is_a_printable_name(value, ok):
    from paicli.config.feature_settings import ConfigError, memory_settings

    def get(name):
        return value if name == "PAICLI_USER" else None

    if ok:
        assert memory_settings(get, None).options.user == value.strip()
    else:
        with pytest.raises(ConfigError, match="PAICLI_USER"):
            memory_settings(get, None)


def test_a_project_env_may_not_choose_whose_memories_these_are(tmp_path):
    from paicli.config.feature_settings import ConfigError
    from paicli.config.settings import load_settings

    home = tmp_path / "home"
    home.mkdir()
    env = {"PAICLI_HOME": str(home), "PAICLI_API_KEY": "k"}
    (tmp_path / ".env").write_text("PAICLI_USER=somebody-else\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="PAICLI_USER"):
        load_settings(tmp_path, environ=env)
    (tmp_path / ".env").write_text("", encoding="utf-8")
    (home / "config.json").write_text(json.dumps({"user": "carol"}), encoding="utf-8")
    assert load_settings(tmp_path, environ=env).memory.options.user == "carol"
    assert load_settings(tmp_path, environ=env | {"PAICLI_USER": "dave"}).memory.options.user == "dave"
