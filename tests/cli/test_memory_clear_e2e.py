"""Issue 35 item 1 end to end, in file mode and in PostgreSQL mode: ``/memory clear`` removes what
``/memory list`` shows in this project (its project memories; global ones only with ``--global``)
after a y/N question giving the counts per scope, never another project's; without a terminal it
changes nothing unless ``--yes``; ``/memory delete`` of another project's memory is refused.

Two projects share one store: the test's project and ``other`` (``--project``), with a global
memory beside them. The REPL runs on a pseudo-terminal, ``-p`` without one.
"""

from __future__ import annotations

import re

import pytest

from tests.support.pty_terminal import ask
from tests.support.waiting import patience

@pytest.fixture(params=["file", "postgres"])
def store_env(request) -> dict[str, str]:
    if request.param == "file":
        return {}
    return {"PAICLI_DATABASE_URL": request.getfixturevalue("database_url"), "PAICLI_USER": "alice"}


@pytest.fixture
def other(tmp_path):
    path = tmp_path / "other"
    path.mkdir()
    return path


def listed(run_paicli, env, *where: str) -> list[str]:
    done = run_paicli("-p", "/memory list", *where, env=env)
    assert done.returncode == 0, done.stderr
    return [line.strip() for line in done.stdout.splitlines()[1:] if not line.startswith("- ")]


@pytest.mark.process  # the REPL on a pseudo-terminal
def test_clear_asks_with_counts_and_removes_only_this_projects_memories(run_paicli, start_repl, store_env, other):
    for fact, *where in (("项目用 pnpm",), ("端口是 8080",), ("--global 回答用中文",), ("另一个项目用 cargo", "--project", str(other))):
        assert run_paicli("-p", f"/save {fact}", *where, env=store_env).returncode == 0

    script = run_paicli("-p", "/memory clear", env=store_env)  # no terminal, no --yes: nothing changes
    assert (script.returncode, script.stdout) == (1, "")
    assert script.stderr.strip().splitlines() == [
        "❌ 没有可以确认的终端，长期记忆未清空；在脚本里请加 --yes（将删除当前项目的 2 条项目记忆）"]
    assert listed(run_paicli, store_env) == ["项目用 pnpm", "端口是 8080", "回答用中文"]

    repl = start_repl(**store_env)
    ask(repl, "/memory clear")
    repl.expect("🧹 将删除当前项目的 2 条项目记忆；其他项目的记忆不受影响，全局记忆 1 条保留（加 --global 一并清空）")
    repl.expect("确认清空？输入 y 确认，其他输入取消：")
    repl.type("n\r")
    repl.expect("已取消，长期记忆没有改动。")
    ask(repl, "/memory clear")
    repl.expect("确认清空？")
    repl.type("y\r")
    repl.expect("🧹 长期记忆已清空：当前项目的 2 条项目记忆")
    ask(repl, "/memory list")
    repl.expect("📋 长期记忆列表")
    shown = repl.expect("❯")
    assert "回答用中文" in shown and "pnpm" not in shown and "cargo" not in shown
    repl.type("/exit\r")
    assert repl.proc.wait(timeout=patience(30)) == 0

    assert listed(run_paicli, store_env) == ["回答用中文"]
    assert listed(run_paicli, store_env, "--project", str(other)) == ["回答用中文", "另一个项目用 cargo"]


def test_clear_global_with_yes_and_delete_of_another_projects_memory(run_paicli, store_env, other):
    for fact, *where in (("项目用 pnpm",), ("--global 回答用中文",), ("另一个项目用 cargo", "--project", str(other))):
        assert run_paicli("-p", f"/save {fact}", *where, env=store_env).returncode == 0
    theirs = run_paicli("-p", "/memory list", "--project", str(other), env=store_env).stdout
    [foreign] = [m for m in re.findall(r"- (fact-[0-9a-f]{8}) \[project", theirs)]
    refused = run_paicli("-p", f"/memory delete {foreign}", env=store_env)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.strip() == (f"❌ 长期记忆 {foreign} 属于其他项目，不在当前项目可见范围内，未删除"
                                      "（/memory list 列出这里可见的记忆）")

    done = run_paicli("-p", "/memory clear --global --yes", env=store_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        "🧹 将删除当前项目的 1 条项目记忆和 1 条全局记忆；其他项目的记忆不受影响",
        "   --yes：不再询问，直接清空",
        "🧹 长期记忆已清空：当前项目的 1 条项目记忆和 1 条全局记忆"]
    assert run_paicli("-p", "/memory list", env=store_env).stdout.strip() == "📭 没有匹配的长期记忆。"
    assert listed(run_paicli, store_env, "--project", str(other)) == ["另一个项目用 cargo"]
    nothing = run_paicli("-p", "/memory clear", "--yes", env=store_env)  # paicli's own --yes, nothing left
    assert (nothing.returncode, nothing.stdout.strip()) == (0, "📭 当前项目没有可清空的长期记忆。")
    bad = run_paicli("-p", "/memory clear everything", env=store_env)
    assert bad.returncode == 1 and bad.stderr.strip().startswith("❌ 用法: /memory clear [--global] [--yes]")
