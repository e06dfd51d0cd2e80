"""grep_code cannot hang: ripgrep ships with paicli, and the Python fallback has a deadline and dies on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from tests.support.waiting import patience

from paicli.tools.base import ToolContext
from paicli.tools.builtin.grep_engines import Query, find_rg, search_python
from paicli.tools.builtin.search import grep_code

CATASTROPHIC = r"(a+)+$"  # exponential for a backtracking engine on "aaaa…b"
EVIL_LINE = "a" * 40 + "b\n"  # 2^40 ways to split the a's: minutes for `re`, nothing for ripgrep


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve())


def evil_project(root: Path) -> None:
    (root / "evil.txt").write_text(EVIL_LINE * 50, encoding="utf-8")


def test_ripgrep_from_the_wheel_is_found_without_path(ctx):
    rg = find_rg()
    assert rg is not None
    # The wheel's copy beside this interpreter, even though the venv's bin is not on PATH.
    assert Path(rg).parent in {Path(sysconfig.get_path("scripts")), Path(sys.executable).parent}
    (ctx.root / "a.py").write_text("needle\n", encoding="utf-8")
    assert grep_code({"pattern": "needle"}, ctx).startswith("匹配结果 1 条 (engine=ripgrep):")


def test_catastrophic_regex_on_ripgrep_answers_at_once(ctx):
    evil_project(ctx.root)
    started = time.monotonic()
    result = grep_code({"pattern": CATASTROPHIC, "regex": True}, ctx, engine="ripgrep")
    assert time.monotonic() - started < 5
    assert result == f"未找到匹配内容: {CATASTROPHIC}"


def test_catastrophic_regex_on_python_engine_stops_at_the_deadline_and_says_what_to_try(ctx):
    evil_project(ctx.root)
    started = time.monotonic()
    result = grep_code({"pattern": CATASTROPHIC, "regex": True}, ctx, engine="python", python_timeout=2)
    assert time.monotonic() - started < 5
    assert result.startswith("工具执行超时: grep_code 搜索 '(a+)+$' 超过 2 秒未完成（engine=python），已停止。")
    assert "灾难性回溯" in result and "regex=false" in result and "path/glob" in result


def test_python_engine_keeps_the_hits_found_before_the_deadline(ctx):
    (ctx.root / "a.txt").write_text("hit here\n", encoding="utf-8")
    (ctx.root / "b.txt").write_text(EVIL_LINE, encoding="utf-8")
    result = grep_code({"pattern": r"hit|(a+)+$", "regex": True}, ctx, engine="python", python_timeout=2)
    assert result.startswith("匹配结果 1 条 (engine=python)（partial: python 引擎超时（2秒））:\n1. a.txt:1")
    assert "partial: true（python 引擎超时（2秒），请缩小 path/glob/pattern 继续搜索）" in result


def test_pattern_ripgrep_refuses_falls_back_to_python_engine(ctx):
    (ctx.root / "a.py").write_text("foobar\nfoobaz\n", encoding="utf-8")
    result = grep_code({"pattern": "foo(?=bar)", "regex": True}, ctx)
    assert result.startswith("匹配结果 1 条 (engine=python):\n1. a.py:1")


SEARCH_SCRIPT = """
import asyncio, sys
from pathlib import Path
from paicli.tools.builtin.grep_engines import Query, search_python

def scan():
    search_python(Path(sys.argv[1]), Query(sys.argv[2], True, True, None, 20, 50))

async def in_worker_thread():  # how tools/registry.py runs a sync tool under paicli's event loop
    await asyncio.to_thread(scan)

print("searching", flush=True)
asyncio.run(in_worker_thread()) if sys.argv[3] == "worker thread" else scan()
print("finished", flush=True)
"""


@pytest.mark.process
@pytest.mark.parametrize("where, target", [
    ("worker thread", "process group"),  # paicli under a terminal's Ctrl-C: the whole foreground group
    ("main thread", "process"),  # the engine called directly, `kill -INT` of that one process
])
def test_ctrl_c_stops_the_python_engine_promptly(tmp_path, where, target):
    evil_project(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", SEARCH_SCRIPT, str(tmp_path), CATASTROPHIC, where],
                            stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        assert proc.stdout.readline() == "searching\n"
        assert _scan_is_backtracking(proc.pid, within=60), "the engine's child never started matching"
        started = time.monotonic()
        if target == "process group":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=patience(5)) != 0
        assert time.monotonic() - started < patience(3)  # prompt on an idle machine: 3 s, stretched by the load
        assert "finished" not in proc.stdout.read()
        assert _group_gone(proc.pid, within=patience(3)), "the scan's child process outlived the interrupted search"
    finally:
        _kill_group(proc)


def _scan_is_backtracking(pgid: int, within: float) -> bool:
    """True once the engine's child in this process group has spent CPU time matching: on a loaded
    machine the child may still be starting a second after "searching", so wait for the fact, not
    for a guess of how long it takes."""
    if not Path("/proc").is_dir():  # no procfs (macOS): the old guess
        time.sleep(1.0)
        return True
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(_cpu_seconds(pid) >= 0.3 for pid in _group_members(pgid) if pid != pgid and _is_engine(pid)):
            return True
        time.sleep(0.05)
    return False


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    members.append(int(entry.name))
            except ProcessLookupError:
                continue
    return members


def _is_engine(pid: int) -> bool:
    try:
        return b"grep_python" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _group_gone(pgid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    proc.stdout.close()
