"""Turn snapshots end to end (issue 29; reference s.1 item 6, t): `paicli -p` against the local
server takes a snapshot before each run, `/restore N` brings the tree back (and undoes itself),
`revert_turn` asks every time, and the project's own `.git` is never touched."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from tests.cli.test_oneshot import call, tool_results
from tests.cli.test_plan_mode import DAG, GOAL, PLANNING, plan_reply
from tests.support.openai_server import ByContent, Reply
from paicli.tools.snapshots.git import Git
from paicli.tools.snapshots.store import TurnSnapshots, snapshot_home

A_PY = "def a():\n    return 1\n"
README = "# demo\r\nline with CRLF\r\n"


def git(project: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(project: Path) -> None:
    """A git project with committed, untracked and ignored files, and a hook git would run."""
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "src" / "pkg" / "a.py").write_text(A_PY)
    (project / "src" / "pkg" / "b.py").write_text("B = 2\n")
    (project / "README.md").write_bytes(README.encode())
    (project / ".gitignore").write_text("build/\n*.log\n")
    (project / ".gitattributes").write_text("* text=auto\n")  # must not normalise what a snapshot keeps
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    hook = project / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\ntouch \"$GIT_DIR/../HOOK_RAN\"\n")
    hook.chmod(0o755)
    (project / "notes.txt").write_text("untracked work\n")
    (project / "build").mkdir()
    (project / "build" / "out.bin").write_bytes(b"\0" * 100)
    (project / "debug.log").write_text("log v1\n")


def tree_hash(folder: Path) -> str:
    """Every path, mode and byte under ``folder``."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest.update(f"{path.relative_to(folder)}\0{info.st_mode}\0".encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def store(paicli_home: Path, project: Path):
    return TurnSnapshots(snapshot_home(paicli_home)).project(project)


def snapshot_files(paicli_home: Path, project: Path, number: int = 1) -> set[str]:
    s = store(paicli_home, project)
    tree = s.entries()[number - 1].tree
    return set(Git(s.repo, project, s.folder / "index").out("ls-tree", "-r", "--name-only", tree).splitlines())


def wreck(run_paicli, server) -> None:
    server.script = [Reply("", tool_calls=[call("execute_command", {"command": "rm -rf src"}, "c1"),
                                           call("write_file", {"path": "README.md", "content": "rewritten\n"}, "w1")]),
                     Reply("清理完毕")]
    done = run_paicli("--yes", "-p", "删掉 src 并重写 README\n第二行不进标签")
    assert done.returncode == 0, done.stderr


def test_restore_brings_back_a_deleted_folder_and_a_rewritten_file_and_restore_again_undoes_it(
        run_paicli, server, project, paicli_home):
    make_repo(project)
    git_before = tree_hash(project / ".git")
    wreck(run_paicli, server)
    assert not (project / "src").exists() and (project / "README.md").read_text() == "rewritten\n"
    (project / "debug.log").write_text("log v2\n")  # ignored: never snapshotted, never restored

    files = snapshot_files(paicli_home, project)
    assert {"src/pkg/a.py", "src/pkg/b.py", "README.md", "notes.txt", ".gitignore"} <= files
    assert not any(f.startswith(("build/", ".git/", ".paicli/")) or f == "debug.log" for f in files)

    listed = run_paicli("-p", "/snapshot list")
    assert listed.returncode == 0, listed.stderr
    assert "删掉 src 并重写 README" in listed.stdout and "第二行" not in listed.stdout
    assert "react" in listed.stdout and "此后改动 3 个文件" in listed.stdout

    done = run_paicli("--yes", "-p", "/restore 1")
    assert done.returncode == 0, done.stderr
    assert "新增 2 个、删除 0 个、修改 1 个文件" in done.stdout
    assert "+ src/pkg/a.py" in done.stdout and "~ README.md" in done.stdout
    assert (project / "src" / "pkg" / "a.py").read_text() == A_PY
    assert (project / "README.md").read_bytes() == README.encode()  # CRLF kept byte for byte
    assert (project / "notes.txt").read_text() == "untracked work\n"
    assert (project / "debug.log").read_text() == "log v2\n"
    assert (project / "build" / "out.bin").exists()

    again = run_paicli("--yes", "-p", "/restore 1")  # the pre-restore snapshot is now number 1
    assert again.returncode == 0, again.stderr
    assert "新增 0 个、删除 2 个、修改 1 个文件" in again.stdout
    assert not (project / "src").exists() and (project / "README.md").read_text() == "rewritten\n"
    assert (project / "notes.txt").read_text() == "untracked work\n"

    assert tree_hash(project / ".git") == git_before  # index, refs, hooks, config: byte-identical
    assert not (project / "HOOK_RAN").exists()
    status = git(project, "status", "--porcelain", "--untracked-files=no").splitlines()  # (after the hash: it refreshes the index)
    assert sorted(status) == [" D src/pkg/a.py", " D src/pkg/b.py", " M README.md"]


def test_restore_without_a_terminal_asks_for_yes_and_changes_nothing(run_paicli, server, project, paicli_home):
    (project / "keep.txt").write_text("v1\n")
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "keep.txt", "content": "v2\n"}, "w1")]),
                     Reply("改好了")]
    assert run_paicli("--yes", "-p", "改 keep.txt").returncode == 0  # not a git repository: works the same
    done = run_paicli("-p", "/restore 1", stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "~ keep.txt" in done.stdout
    assert done.stderr.strip() == "❌ 没有可以确认的终端，未恢复；在脚本里请加 --yes"
    assert (project / "keep.txt").read_text() == "v2\n"
    assert len(store(paicli_home, project).entries()) == 1  # no pre-restore snapshot either

    bad = run_paicli("--yes", "-p", "/restore 7")
    assert bad.returncode == 1 and bad.stderr.strip() == "❌ 恢复快照失败: 没有第 7 个快照（共 1 个，1 是最近的）"


def test_revert_turn_asks_and_is_refused_under_yes_without_a_terminal_unless_allowed(
        run_paicli, server, project, paicli_home):
    (project / "app.py").write_text("v1\n")
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "app.py", "content": "v2\n"}, "w1")]),
                     Reply("改好了")]
    assert run_paicli("--yes", "-p", "改 app.py").returncode == 0

    server.script += [Reply("", tool_calls=[call("revert_turn", {"offset": 1}, "r1")]), Reply("没能回滚")]
    done = run_paicli("--yes", "-p", "撤销上一轮", stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr  # an approval nobody could answer (issue 26: honest -p)
    assert '🚫 无法询问审批，已拒绝: revert_turn {"offset": 1}' in done.stderr  # named, never asked
    [refused] = tool_results(server.requests[-1])
    assert "[HITL] 操作已被拒绝" in refused["content"] and "PAICLI_ALLOW_REVERT=yes" in refused["content"]
    assert (project / "app.py").read_text() == "v2\n"

    # Snapshots now: before this turn, before the refused one (app.py v2), before the first (v1).
    server.script += [Reply("", tool_calls=[call("revert_turn", {"offset": 3}, "r3")]), Reply("已回滚")]
    done = run_paicli("--yes", "-p", "撤销改 app.py 的那一轮", env={"PAICLI_ALLOW_REVERT": "yes"})
    assert done.returncode == 0, done.stderr
    [result] = tool_results(server.requests[-1])
    assert "已新增 0 个、删除 0 个、修改 1 个文件" in result["content"] and "~ app.py" in result["content"]
    assert (project / "app.py").read_text() == "v1\n"
    audit = (paicli_home / "audit").glob("audit-*.jsonl")
    assert any('"revert_turn"' in path.read_text(encoding="utf-8") for path in audit)


def test_a_plan_run_with_parallel_tasks_is_one_snapshot(run_paicli, server, project, paicli_home):
    (project / "data.txt").write_text("alpha beta\n")
    routes = ByContent({PLANNING: [plan_reply(DAG)], "当前任务：统计 alpha": [Reply("ALPHA=11")],
                        "当前任务：统计 beta": [Reply("BETA=22")], "当前任务：汇总两者": [Reply("合计 33")]})
    server.script = routes.script()
    done = run_paicli("--mode", "plan", "-p", GOAL)
    assert done.returncode == 0, done.stderr
    [entry] = store(paicli_home, project).entries()
    assert (entry.mode, entry.input) == ("plan", GOAL)


def test_snapshot_status_and_clean(run_paicli, server, project, paicli_home):
    (project / "f.txt").write_text("0\n")
    for i in range(3):
        server.script += [Reply("", tool_calls=[call("write_file", {"path": "f.txt", "content": f"{i + 1}\n"}, "w")]),
                          Reply("ok")]
        assert run_paicli("--yes", "-p", f"第 {i} 次").returncode == 0
    status = run_paicli("-p", "/snapshot status")
    assert status.returncode == 0, status.stderr
    assert "快照 3 个（不同内容 3 份）" in status.stdout and "PAICLI_SNAPSHOT_KEEP" in status.stdout
    cleaned = run_paicli("-p", "/snapshot clean 1")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "已删除 2 个较早的快照，保留最近 1 个" in cleaned.stdout
    [kept] = store(paicli_home, project).entries()
    assert kept.input == "第 2 次"
    assert run_paicli("-p", "/snapshot frob").returncode == 1
