"""Nothing in the shared memory file is dropped by a rewrite (paicli issue 10): entries of an
unknown type, unknown fields, odd shapes, items that are not entries, top-level keys."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paicli.memory.longterm.manager import LongTermMemory
from tests.support import foreign_memory as foreign
from tests.support.properties import examples

NEW_FACT = "部署使用 Kubernetes 集群 alpha-7"


def _memory(directory: Path, text: str) -> LongTermMemory:
    (directory / "long_term_memory.json").write_text(text, encoding="utf-8")
    return LongTermMemory(directory)


def _items(directory: Path):
    return foreign.items_of((directory / "long_term_memory.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("wrapped", [False, True], ids=["array", "object"])
def test_save_delete_and_verify_keep_every_item_they_do_not_touch(tmp_path, wrapped):
    memory = _memory(tmp_path, foreign.file_text(wrapped))
    assert memory.save_fact(NEW_FACT, scope="global", project_key=None).status.value == "STORED"
    assert memory.delete(foreign.DELETE_ID, None) is not None
    assert memory.verify(foreign.VERIFY_ID, None) is not None

    items, top = _items(tmp_path)
    new = [i for i in items if isinstance(i, dict) and i.get("content") == NEW_FACT]
    checked = next(i for i in items if isinstance(i, dict) and i.get("id") == foreign.VERIFY_ID)
    rest = [i for i in items if i is not checked and not any(i is n for n in new)]
    assert rest == foreign.unchanged()  # the same values, in the same order
    assert foreign.verified(checked) == next(i for i in foreign.ITEMS if isinstance(i, dict)
                                             and i.get("id") == foreign.VERIFY_ID)
    assert len(new) == 1 and new[0]["metadata"]["scope"] == "global"
    assert top == (None if not wrapped else {**foreign.TOP_LEVEL, "trailer": True})


def test_entries_paicli_can_read_are_searchable_and_the_rest_is_not(tmp_path):
    memory = _memory(tmp_path, foreign.file_text(False))
    contents = {e.content for e in memory.entries()}
    assert {"用户偏好简洁回答", "服务端口是 8080", "旧的摘要内容", "数字 id 的条目", "时间写法不认识"} <= contents
    assert "a note from a newer version" not in contents  # an unknown type is kept, not used
    no_id = next(e for e in memory.entries() if e.content == "用户偏好简洁回答")
    assert memory.delete(no_id.id, None) is not None  # a derived id still names it
    assert "用户偏好简洁回答" not in (tmp_path / "long_term_memory.json").read_text(encoding="utf-8")


def test_millis_and_digit_strings_read_as_the_same_instant(tmp_path):
    memory = _memory(tmp_path, foreign.file_text(False))
    port = next(e for e in memory.entries() if e.id == "fact-0000e004")
    assert port.timestamp == port.last_verified_at and port.timestamp.year == 2024
    assert port.token_count > 0  # "7" is not a count: re-estimated


def test_clear_removes_what_paicli_shows_and_keeps_what_it_cannot_read(tmp_path):
    memory = _memory(tmp_path, foreign.file_text(True))
    memory.clear(memory.entries())  # every memory shown (here: the whole file)
    items, top = _items(tmp_path)
    assert memory.entries() == [] and top == {**foreign.TOP_LEVEL, "trailer": True}
    unreadable = [i for i in foreign.ITEMS if not isinstance(i, dict) or i.get("type") == "NOTE" or i.get("content") is None]
    assert items == unreadable and len(unreadable) == 6


# -- property: any JSON the file holds survives a save -----------------------------------------------
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(
    max_size=8) | st.just("\ud800")
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=8)
_known = st.fixed_dictionaries({}, optional={
    "id": st.text(alphabet="abf-0123", max_size=6) | st.integers() | st.none(),
    "content": st.text(alphabet="abc 的是", max_size=10) | _json,
    "type": st.sampled_from(["FACT", "fact", "SUMMARY", "NOTE", "", None]) | _json,
    "timestamp": st.sampled_from(["2026-09-23T08:00:00Z", "1727078400000", "bad", None]) | st.integers() | _json,
    "lastVerifiedAt": st.sampled_from(["2026-09-23T08:00:00.1Z", "", None]) | st.floats(allow_nan=False),
    "metadata": st.dictionaries(st.sampled_from(["scope", "project", "source", "x"]), _json, max_size=3) | _json,
    "tokenCount": st.integers() | st.text(max_size=3) | st.none(),
    "tags": _json,
})
_item = _known | _json


@settings(max_examples=examples(int(os.environ.get("PAICLI_PROPERTY_EXAMPLES", "60"))), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_item, max_size=8))
def test_any_items_survive_a_save_and_a_delete(items):
    with tempfile.TemporaryDirectory() as directory:
        memory = _memory(Path(directory), json.dumps(items))
        saved = memory.save_fact(NEW_FACT, scope="global", project_key=None)
        assert saved.status.value == "STORED"
        after, _ = _items(Path(directory))
        assert after[:-1] == items and after[-1]["content"] == NEW_FACT  # the new fact goes last
        assert memory.delete(saved.entry.id, None) is not None
        assert _items(Path(directory))[0] == items


def test_a_foreign_item_follows_its_entry_or_the_nearest_one_left(tmp_path):
    items = [{"content": "same"}, "after first", {"content": "same"}, "after second",
             {"id": "fact-gone", "content": "to delete", "metadata": {"scope": "global"}}, "after gone"]
    memory = _memory(tmp_path, json.dumps(items))
    assert memory.delete("fact-gone", None) is not None
    assert _items(tmp_path)[0] == items[:4] + ["after gone"]  # two entries share a derived id
