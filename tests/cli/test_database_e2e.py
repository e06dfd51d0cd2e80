"""Issue 28 end to end: ``PAICLI_DATABASE_URL`` puts sessions and memory in a real PostgreSQL.

paicli runs as a subprocess against the fake OpenAI server and a throwaway cluster: a session
started under one PAICLI_HOME continues under another (a second machine), memories saved with
/save are retrieved into the next turn from the database, nothing is written to the files, and a
URL that cannot be used is one line naming the setting with exit code 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psycopg
import pytest

from tests.support.inprocess import run_in_process
from tests.support.openai_server import Reply
from tests.support.waiting import patience

SESSION = "db-session-1"


def test_a_session_continues_from_a_second_paicli_home_and_memory_lives_in_the_database(
        run_paicli, server, database_url, tmp_path, paicli_home):
    db = {"PAICLI_DATABASE_URL": database_url}
    server.script = [Reply("记住了，项目叫 alpha。"), Reply("项目叫 alpha，用 pnpm。")]
    first = run_paicli("-p", "项目叫 alpha", "--session", SESSION, env=db)
    assert first.returncode == 0, first.stderr
    saved = run_paicli("-p", "/save 项目使用 pnpm 管理依赖", env=db)
    assert saved.returncode == 0, saved.stderr

    other_home = tmp_path / "machine-2"
    other_home.mkdir()
    second = run_paicli("-p", "项目叫什么？依赖用什么管理？", "--session", SESSION,
                        env=db | {"PAICLI_HOME": str(other_home)})
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "项目叫 alpha，用 pnpm。"
    sent = server.requests[1]["messages"]
    assert [m["content"] for m in sent[1:3]] == ["项目叫 alpha", "记住了，项目叫 alpha。"]
    assert any("项目使用 pnpm 管理依赖" in str(m["content"]) for m in sent[3:])  # retrieved from the store
    for home in (paicli_home, other_home):  # nothing went to the files
        assert not (home / "history" / "raw").exists() or not any((home / "history" / "raw").iterdir())
        assert not (home / "memory" / "long_term_memory.json").exists()
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM store WHERE prefix LIKE 'memories.project.%'").fetchone()[0] == 1
        assert conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 1

    listed = run_paicli("-p", "/resume", env=db | {"PAICLI_HOME": str(other_home)})
    assert listed.returncode == 0 and SESSION in listed.stdout and "项目叫 alpha" in listed.stdout


def test_an_unreachable_or_misspelt_database_url_is_one_line_naming_the_setting(run_paicli, server, tmp_path):
    for url in (f"postgresql:///nowhere?host={tmp_path}", "postgresq://x", "postgresql://u:secretpw@[::1/db"):
        result = run_paicli("-p", "你好", env={"PAICLI_DATABASE_URL": url})
        assert result.returncode == 2, (url, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "PAICLI_DATABASE_URL" in lines[0], result.stderr
        assert "secretpw" not in result.stderr and "Traceback" not in result.stderr
    assert server.requests == []  # never fell back to the files and ran the turn


def test_continue_finds_sessions_in_the_database_and_refuses_an_unknown_one(run_paicli, server, database_url):
    env = {"PAICLI_DATABASE_URL": database_url}
    unknown = run_paicli("--session", "nope", "--continue", env=env)
    assert unknown.returncode == 2 and "未找到会话 nope" in unknown.stderr
    server.script = [Reply("好")]
    assert run_paicli("-p", "你好", "--session", "db-1", env=env).returncode == 0
    again = run_paicli("--session", "db-1", "--continue", env=env)  # known to the database, nothing to finish
    assert again.returncode != 2, again.stderr


def test_a_project_env_may_not_set_the_database(run_paicli, server, project, database_url):
    (project / ".env").write_text(f"PAICLI_DATABASE_URL={database_url}\n")
    result = run_paicli("-p", "你好")
    assert result.returncode == 2 and "PAICLI_DATABASE_URL" in result.stderr
    assert server.requests == []


def test_a_database_set_up_by_a_newer_paicli_is_refused(run_paicli, server, database_url):
    server.script = [Reply("好")]
    assert run_paicli("-p", "你好", env={"PAICLI_DATABASE_URL": database_url}).returncode == 0
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO checkpoint_migrations (v) VALUES (999)")
    result = run_paicli("-p", "你好", env={"PAICLI_DATABASE_URL": database_url})
    assert result.returncode == 2 and "更新" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def _clone(path, origin: str):
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return path


def test_two_checkouts_of_one_repository_share_project_memory_and_sessions(paicli_env, server, database_url, tmp_path):
    env = paicli_env(server.base_url, PAICLI_DATABASE_URL=database_url)
    one = _clone(tmp_path / "laptop" / "shop", "git@github.com:Acme/Shop.git")
    two = _clone(tmp_path / "desktop" / "shop-copy", "https://me@github.com/Acme/Shop")
    other = _clone(tmp_path / "elsewhere", "https://github.com/Acme/Other.git")

    def run(cwd, *args, home="h1"):  # in process, as run_paicli does, in another working directory
        return run_in_process(list(args), cwd=cwd, env=env | {"PAICLI_HOME": str(tmp_path / home)}, timeout=60)

    assert run(one, "-p", "/save 项目使用 pnpm 管理依赖").returncode == 0
    server.script = [Reply("好的")]
    assert run(one, "-p", "看看依赖", "--session", "s-laptop").returncode == 0
    listed = run(two, "-p", "/memory list", home="h2")
    assert "项目使用 pnpm 管理依赖" in listed.stdout, listed.stdout + listed.stderr
    assert "s-laptop" in run(two, "-p", "/resume", home="h2").stdout
    assert "项目使用 pnpm 管理依赖" not in run(other, "-p", "/memory list").stdout
    assert "s-laptop" not in run(other, "-p", "/resume").stdout


def test_a_second_process_on_a_busy_session_waits_then_gives_up_with_one_line(run_paicli, server, database_url):
    db = {"PAICLI_DATABASE_URL": database_url, "PAICLI_SESSION_WAIT": "1"}
    with psycopg.connect(database_url, autocommit=True) as holder:  # another machine's turn in progress
        holder.execute("SELECT pg_advisory_lock(hashtext('paicli.run.session:busy-1'))")
        busy = run_paicli("-p", "你好", "--session", "busy-1", env=db)
    assert busy.returncode == 1 and "busy-1" in busy.stderr and "正被另一个进程使用" in busy.stderr
    assert server.requests == []
    server.script = [Reply("好")]
    done = run_paicli("-p", "你好", "--session", "busy-1", env=db)  # the holder is gone: it runs
    assert done.returncode == 0 and done.stdout.strip() == "好", done.stderr


def test_db_import_twice_gives_the_same_counts_and_the_session_continues_from_the_database(
        run_paicli, server, database_url, paicli_home, tmp_path):
    server.script = [Reply("记住了，项目叫 alpha。"), Reply("项目叫 alpha。")]
    assert run_paicli("-p", "项目叫 alpha", "--session", "ledger-1").returncode == 0  # on the files
    assert run_paicli("-p", "/save 项目使用 pnpm 管理依赖").returncode == 0
    db = {"PAICLI_DATABASE_URL": database_url}
    first, second = run_paicli("db", "import", env=db), run_paicli("db", "import", env=db)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("已导入 1 个会话（") and "长期记忆新增 1 条，已存在 0 条" in first.stdout
    assert second.stdout.split("；")[0] == first.stdout.split("；")[0]  # the same sessions and checkpoints
    assert "长期记忆新增 0 条，已存在 1 条" in second.stdout
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM store").fetchone()[0] == 1

    other_home = tmp_path / "machine-2"
    other_home.mkdir()
    continued = run_paicli("-p", "项目叫什么？", "--session", "ledger-1", env=db | {"PAICLI_HOME": str(other_home)})
    assert continued.returncode == 0 and continued.stdout.strip() == "项目叫 alpha。", continued.stderr
    assert [m["content"] for m in server.requests[1]["messages"][1:3]] == ["项目叫 alpha", "记住了，项目叫 alpha。"]

    exported = run_paicli("db", "export", "--to", str(tmp_path / "out"), env=db)
    assert exported.returncode == 0 and "新增 1 条" in exported.stdout, exported.stderr
    data = json.loads((tmp_path / "out" / "long_term_memory.json").read_text(encoding="utf-8"))
    assert [e["content"] for e in data] == ["项目使用 pnpm 管理依赖"]


def test_db_without_a_database_url_is_one_line(run_paicli):
    result = run_paicli("db", "import")
    assert result.returncode == 2 and "PAICLI_DATABASE_URL" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _plan_results(url: str, session: str) -> set[str]:
    """Task ids whose results the Plan batch's checkpoint holds in the database."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        try:
            found = saver.get_tuple({"configurable": {"thread_id": session, "checkpoint_ns": "plan"}})
        except psycopg.errors.UndefinedTable:  # the child has not set up the tables yet
            return set()
    return {uid for _task, channel, value in (found.pending_writes if found else []) if channel == "results"
            for uid in value}


@pytest.mark.process
def test_plan_kill_9_then_continue_on_postgres_reruns_nothing_completed(project, paicli_env, server, database_url):
    from tests.cli.test_plan_mode import DAG, GOAL, PLANNING, plan_reply, submitted_text
    from tests.support.openai_server import ByContent, Hang

    env = paicli_env(server.base_url, PAICLI_DATABASE_URL=database_url)
    routes = ByContent({PLANNING: [plan_reply(DAG)], "当前任务：统计 alpha": [Reply("ALPHA=11")],
                        "当前任务：统计 beta": [Hang(60, Reply("too late"))]})
    server.script = routes.script()
    child = subprocess.Popen([sys.executable, "-m", "paicli", "--mode", "plan", "-p", GOAL, "--session", "s-kill"],
                             cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + patience(40)
        while _plan_results(database_url, "s-kill") != {"task_1"}:
            assert time.monotonic() < deadline and child.poll() is None, "task_1 never finished"
            time.sleep(0.2)
    finally:
        child.kill()  # SIGKILL: no cleanup runs
        child.wait()
    asked = len(server.requests)
    routes.routes.update({"当前任务：统计 beta": [Reply("BETA=22")], "当前任务：汇总两者": [Reply("合计 33")]})
    server.script = server.script[:asked] + [routes.reply] * 2
    done = run_in_process(["--session", "s-kill", "--continue"], cwd=project, env=env, timeout=60)  # in process
    assert done.returncode == 0, done.stderr
    again = [submitted_text(r) for r in server.requests[asked:]]
    assert len(again) == 2 and not any("当前任务：统计 alpha" in t for t in again)  # task_1 kept its result
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_3] 合计 33"


def test_clear_is_recorded_in_the_database_and_resume_lists_the_session_as_the_ledger_does(
        run_paicli, server, database_url):
    server.script = [Reply("第一轮回答"), Reply("第一轮回答")]
    listings = []
    for env in ({}, {"PAICLI_DATABASE_URL": database_url}):  # the ledger, then the database
        assert run_paicli("-p", "第一轮", "--session", SESSION, env=env).returncode == 0
        cleared = run_paicli("-p", "/clear", "--session", SESSION, env=env)
        assert "🗑️ 当前对话历史已清空" in cleared.stdout, cleared.stderr
        listing = run_paicli("-p", "/resume", env=env)
        assert listing.returncode == 0, listing.stderr
        line = next(line for line in listing.stdout.splitlines() if SESSION in line)
        listings.append(line.split(" · ", 1)[1])  # past the time of the last activity
    assert listings[0] == listings[1] == "0 条消息 · react · 第一轮"
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT thread_id, event, source, metadata FROM paicli_session_events").fetchall()
    assert rows == [(SESSION, "history_clear", "slash_clear", {"discardedViewMessages": 2})]


def test_db_import_copies_clear_events_once_and_resume_lists_the_cleared_session_as_the_ledger_does(
        run_paicli, server, database_url):
    server.script = [Reply("第一轮回答")]
    assert run_paicli("-p", "第一轮", "--session", SESSION).returncode == 0  # on the files
    assert "🗑️ 当前对话历史已清空" in run_paicli("-p", "/clear", "--session", SESSION).stdout
    db = {"PAICLI_DATABASE_URL": database_url}
    for _ in range(2):  # idempotent: the event is copied once
        imported = run_paicli("db", "import", env=db)
        assert imported.returncode == 0, imported.stderr
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT thread_id, event, source, metadata FROM paicli_session_events").fetchall()
    assert rows == [(SESSION, "history_clear", "slash_clear", {"discardedViewMessages": 2})]
    listings = [run_paicli("-p", "/resume", env=env).stdout for env in ({}, db)]
    lines = [next(line for line in listing.splitlines() if SESSION in line) for listing in listings]
    assert lines[0] == lines[1] and lines[0].endswith("0 条消息 · react · 第一轮")


def test_db_import_rekeys_project_memories_to_the_remote_and_export_brings_them_back(
        run_paicli, server, database_url, project, paicli_home, tmp_path):
    # Issue 35 item 4: a checkout with an origin remote; file mode keys its memories by the path.
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "git@github.com:Acme/Shop.git"], check=True)
    db = {"PAICLI_DATABASE_URL": database_url, "PAICLI_USER": "alice"}
    assert run_paicli("-p", "/save 项目使用 pnpm 管理依赖").returncode == 0
    assert run_paicli("-p", "/save --global 回答用中文").returncode == 0
    first = run_paicli("db", "import", env=db)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().endswith("长期记忆新增 2 条，已存在 0 条；1 条项目记忆的项目键由项目路径改为远程仓库地址")
    found = run_paicli("-p", "/memory search pnpm", env=db)
    assert "项目使用 pnpm 管理依赖" in found.stdout and "[project·团队] github.com/Acme/Shop" in found.stdout, found.stdout
    assert "[global·个人]" in run_paicli("-p", "/memory list", env=db).stdout
    again = run_paicli("db", "import", env=db)
    assert again.stdout.strip().endswith("长期记忆新增 0 条，已存在 2 条"), again.stdout
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT prefix FROM store ORDER BY prefix").fetchall()
    assert rows == [("memories.project.github%2Ecom/Acme/Shop",), ("memories.user.alice",)]

    assert run_paicli("-p", "/save 构建用 vite", env=db).returncode == 0  # keyed by the remote
    out = tmp_path / "exported"
    exported = run_paicli("db", "export", "--project", str(project), "--to", str(out), env=db)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.strip() == (f"已导出长期记忆（项目 {project.resolve()}）：新增 3 条，文件中已存在 0 条；"
                                       "2 条项目记忆的项目键由远程仓库地址改为项目路径")
    data = json.loads((out / "long_term_memory.json").read_text(encoding="utf-8"))
    assert {e["metadata"].get("project") for e in data if e["metadata"]["scope"] == "project"} == {str(project.resolve())}
    assert not any("owner" in e["metadata"] for e in data)  # the file has no users
    in_file = run_paicli("-p", "/memory search vite", env={"PAICLI_MEMORY_DIR": str(out)})
    assert "构建用 vite" in in_file.stdout and "[project]" in in_file.stdout, in_file.stdout + in_file.stderr
    repeat = run_paicli("db", "export", "--project", str(project), "--to", str(out), env=db)
    assert repeat.stdout.strip().endswith("新增 0 条，文件中已存在 3 条"), repeat.stdout
