"""Issue 35 item 3: a database that can drop, with a real PostgreSQL server of the test's own.

- restarted between two REPL turns: the second turn simply works (the pool reconnects);
- killed during a turn: one line naming the database, the REPL stays, and once the server is
  back the next turn works with the conversation saved before;
- ``-p`` while it is down: the same one line, exit 1, no traceback;
- three processes opening a fresh database at once (three times): all succeed, each save kept.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from tests.support.openai_server import Reply
from tests.support.postgres import fresh_database
from tests.support.pty_terminal import ask
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # a server to stop and restart, a REPL on a pseudo-terminal

DOWN = "连接中断"
SLOW = 90  # seconds: a turn that waits for a connection, on a busy machine


@pytest.fixture
def url(own_cluster) -> str:
    return fresh_database(own_cluster.url("postgres"))


def test_a_restart_between_two_turns_is_invisible(start_repl, server, own_cluster, url):
    server.script = [Reply("第一轮回答"), Reply("第二轮回答")]
    repl = start_repl(PAICLI_DATABASE_URL=url)
    ask(repl, "第一轮")
    repl.expect("第一轮回答")
    repl.expect("❯")
    own_cluster.restart()  # every session ended (AdminShutdown), the pooled connections with them
    time.sleep(1.2)  # the pool's connections have been idle long enough to be checked
    repl.type("第二轮\r")
    shown = repl.expect("第二轮回答", timeout=SLOW)
    assert DOWN not in shown and "内部错误" not in shown, shown
    assert [m["content"] for m in server.requests[1]["messages"][1:4]] == ["第一轮", "第一轮回答", "第二轮"]


def test_a_server_killed_during_a_turn_is_one_line_and_the_repl_goes_on_once_it_is_back(
        start_repl, run_paicli, server, own_cluster, url):
    def kill_then_answer(_request):
        own_cluster.stop_server("immediate")  # as if it crashed, while the model answers
        return Reply("这一轮的回答存不进数据库")

    server.script = [Reply("记住了：项目叫 alpha"), kill_then_answer, Reply("项目叫 alpha")]
    repl = start_repl(PAICLI_DATABASE_URL=url)
    ask(repl, "项目叫 alpha")
    repl.expect("记住了：项目叫 alpha")
    ask(repl, "第二轮")
    repl.expect(DOWN, timeout=SLOW)
    repl.expect("❯", timeout=SLOW)  # the REPL stays: its prompt comes back
    assert repl.proc.poll() is None
    [line] = [line for line in repl.text.splitlines() if DOWN in line]
    assert line.startswith("❌ 数据库 t_") and "Traceback" not in repl.text and "内部错误" not in repl.text, repl.text

    down = run_paicli("-p", "/memory list", env={"PAICLI_DATABASE_URL": url}, timeout=SLOW)  # meanwhile, a script
    assert down.returncode == 2 and "PAICLI_DATABASE_URL" in down.stderr, down.stderr  # at start: cannot connect
    own_cluster.start_server()
    repl.type("项目叫什么？\r")
    repl.expect("项目叫 alpha", timeout=SLOW)
    sent = [m["content"] for m in server.requests[2]["messages"][1:3]]
    assert sent == ["项目叫 alpha", "记住了：项目叫 alpha"]  # what was saved before the kill is all there
    repl.type("/exit\r")
    assert repl.proc.wait(timeout=patience(30)) == 0
    assert len([line for line in repl.text.splitlines() if DOWN in line]) == 1


def test_a_one_shot_run_whose_database_goes_away_mid_turn_exits_1_with_one_line(run_paicli, server, own_cluster, url):
    def kill_then_answer(_request):
        own_cluster.stop_server("immediate")
        return Reply("答案")

    server.script = [kill_then_answer]
    done = run_paicli("-p", "你好", env={"PAICLI_DATABASE_URL": url}, timeout=SLOW)
    own_cluster.start_server()
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len([line for line in lines if DOWN in line]) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "内部错误" not in done.stderr


OPENER = textwrap.dedent("""
    import os, sys, time
    go, me, fact = sys.argv[1], sys.argv[2], sys.argv[3]
    from paicli.__main__ import main
    import paicli.app, paicli.run.database  # what opening the database needs, imported before the start
    open(go + ".ready" + me, "w").close()
    while not os.path.exists(go):  # every process is ready: they open the database together
        time.sleep(0.002)
    sys.exit(main(["-p", "/save --force " + fact]))
""")


def test_three_processes_opening_a_fresh_database_at_once_all_succeed(paicli_env, server, project, own_cluster,
                                                                      tmp_path):
    env = paicli_env(server.base_url)
    for trial in range(3):
        database = fresh_database(own_cluster.url("postgres"))
        go = tmp_path / f"go-{trial}"
        children = [subprocess.Popen([sys.executable, "-c", OPENER, str(go), str(i), f"第 {trial} 轮第 {i} 个进程的事实 p{i}"],
                                     cwd=project, env=env | {"PAICLI_DATABASE_URL": database},
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    for i in range(3)]
        deadline = time.monotonic() + 120
        while not all(Path(f"{go}.ready{i}").exists() for i in range(3)):
            assert time.monotonic() < deadline and all(c.poll() is None for c in children), \
                [c.communicate()[1] for c in children if c.poll() is not None]
            time.sleep(0.02)
        go.touch()
        results = [c.communicate(timeout=120) for c in children]
        assert [c.returncode for c in children] == [0, 0, 0], [err for _, err in results]
        with psycopg.connect(database) as conn:
            assert conn.execute("SELECT count(*) FROM store").fetchone()[0] == 3
            assert conn.execute("SELECT count(*) FROM checkpoint_migrations").fetchone()[0] == \
                conn.execute("SELECT count(DISTINCT v) FROM checkpoint_migrations").fetchone()[0]
