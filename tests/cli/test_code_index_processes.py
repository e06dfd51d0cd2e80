"""Two processes indexing one project, and Ctrl-C during `/index` (issue 37): real processes."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.support.waiting import patience

pytestmark = pytest.mark.process


def many_files(root, count: int) -> None:
    for i in range(count):
        folder = root / f"pkg{i // 100:02}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:04}.py").write_text(
            f'def function_{i}(value):\n    """Helper number {i}."""\n    return value + {i}\n\n'
            f"class Thing{i}:\n    def method(self):\n        return function_{i}(1)\n")


def database(paicli_home):
    (path,) = paicli_home.glob("codeindex/*/index.sqlite")
    return sqlite3.connect(path)


def test_two_processes_indexing_one_project_leave_one_intact_index(project, paicli_env, server, paicli_home):
    many_files(project, 600)
    env = paicli_env(server.base_url)
    children = [subprocess.Popen([sys.executable, "-m", "paicli", "-p", "/index"], cwd=project, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [child.communicate(timeout=300) for child in children]
    assert [child.returncode for child in children] == [0, 0], outputs
    conn = database(paicli_home)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM files").fetchone() == (600,)
    assert conn.execute("SELECT count(*) FROM symbols").fetchone() == (1800,)
    assert sum("新增 600" in out for out, _err in outputs) == 1  # the other one found nothing left to do


def test_ctrl_c_stops_index_between_files_and_the_next_index_finishes(project, paicli_env, server, paicli_home):
    many_files(project, 3000)
    env = paicli_env(server.base_url)
    child = subprocess.Popen([sys.executable, "-m", "paicli", "-p", "/index"], cwd=project, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = child.stdout.readline()
    assert "正在索引" in first
    # Ctrl-C once the first files are in (its first progress line), not after a fixed time: on a
    # busy machine a second could be the whole index
    progress = child.stdout.readline()
    assert progress.startswith("⏳ 索引中"), progress
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=patience(120))
    assert child.returncode == 1, (out, err)
    assert "⏹️ 已停止索引" in err and "Traceback" not in err
    conn = database(paicli_home)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    done = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    assert 0 < done < 3000
    again = subprocess.run([sys.executable, "-m", "paicli", "-p", "/index"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"未变 {done:,}" in again.stdout and "3,000 个文件" in again.stdout
