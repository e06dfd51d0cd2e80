"""``paicli -p`` against a memory file paicli does not fully understand or cannot use
(paicli issue 10): nothing in it is dropped, and an unusable path is one line, never a traceback."""

from __future__ import annotations

import json

import pytest

from tests.support import foreign_memory as foreign
from tests.support.openai_server import Reply

NEW_FACT = "部署使用 Kubernetes 集群 alpha-7"


def _memory_file(paicli_home):
    return paicli_home / "memory" / "long_term_memory.json"


def _ok(done) -> str:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "内部错误" not in done.stderr
    return done.stdout.strip()


def _lines_naming(done, path) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if str(path) in line]


@pytest.mark.parametrize("wrapped", [False, True], ids=["array", "object"])
def test_save_delete_and_verify_keep_everything_else_in_the_file(run_paicli, paicli_home, wrapped):
    path = _memory_file(paicli_home)
    path.parent.mkdir()
    path.write_text(foreign.file_text(wrapped), encoding="utf-8")

    assert _ok(run_paicli("-p", f"/save --global {NEW_FACT}")) == f"💾 已保存到长期记忆(global): {NEW_FACT}"
    assert _ok(run_paicli("-p", f"/memory delete {foreign.DELETE_ID}")) == f"🗑️ 已删除长期记忆: {foreign.DELETE_ID}"
    assert _ok(run_paicli("-p", f"/memory verify {foreign.VERIFY_ID}")).startswith(f"✅ 已刷新核实时间: {foreign.VERIFY_ID}")

    items, top = foreign.items_of(path.read_text(encoding="utf-8"))
    checked = next(i for i in items if isinstance(i, dict) and i.get("id") == foreign.VERIFY_ID)
    new = [i for i in items if isinstance(i, dict) and i.get("content") == NEW_FACT]
    assert [i for i in items if i is not checked and i not in new] == foreign.unchanged()
    assert foreign.verified(checked) == next(i for i in foreign.ITEMS if isinstance(i, dict)
                                             and i.get("id") == foreign.VERIFY_ID)
    assert len(new) == 1
    assert top == (None if not wrapped else {**foreign.TOP_LEVEL, "trailer": True})
    assert not list(path.parent.glob("*.corrupt-*"))  # nothing needed backing up


def test_save_into_a_directory_where_the_file_should_be_fails_with_one_line(run_paicli, paicli_home):
    path = _memory_file(paicli_home)
    path.mkdir(parents=True)
    done = run_paicli("-p", f"/save {NEW_FACT}")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "内部错误" not in done.stderr
    [line] = _lines_naming(done, path)
    assert line.startswith("❌ ") and "未写入" in line
    assert path.is_dir() and not any(path.iterdir())


def test_save_under_a_file_where_the_memory_directory_should_be_fails_with_one_line(run_paicli, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file", encoding="utf-8")
    done = run_paicli("-p", f"/save {NEW_FACT}", env={"PAICLI_MEMORY_DIR": str(blocker / "memory")})
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "内部错误" not in done.stderr
    assert len(_lines_naming(done, blocker)) == 1
    assert blocker.read_text(encoding="utf-8") == "a file"


def test_the_agent_still_answers_when_the_memory_file_cannot_be_read(server, run_paicli, paicli_home):
    path = _memory_file(paicli_home)
    path.mkdir(parents=True)
    server.script = [Reply("answer without memory")]
    done = run_paicli("-p", "what do you remember?")
    assert _ok(done) == "answer without memory"
    [line] = _lines_naming(done, path)
    assert line.startswith("⚠️ ") and line in done.stderr


def test_memory_list_shows_what_it_can_read_and_keeps_the_file(run_paicli, paicli_home):
    path = _memory_file(paicli_home)
    path.parent.mkdir()
    text = foreign.file_text(False)
    path.write_text(text, encoding="utf-8")
    out = _ok(run_paicli("-p", "/memory list"))
    assert "用户偏好简洁回答" in out and "服务端口是 8080" in out and "a note from a newer version" not in out
    assert path.read_text(encoding="utf-8") == text  # reading never rewrites
