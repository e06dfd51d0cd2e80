"""Team mode through the shared mode runner, end to end against the local server: ``/team <goal>``
in ``-p``, the Q20 handoff to a follow-up ReAct turn, and ``kill -9`` mid-step then ``--continue``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paicli.memory.ledger.namespaced import NamespacedSaver
from paicli.memory.ledger.saver import JsonlLedgerSaver
from tests.cli.conftest import run_timeout
from tests.support.openai_server import ByContent, Hang, Reply
from tests.support.waiting import patience

GOAL = "汇总两个文件"
PLANNING = "请为以下任务制定执行计划"
PLAN = Reply(json.dumps({"summary": "汇总", "steps": [
    {"id": "a", "description": "读 A", "dependencies": []},
    {"id": "b", "description": "读 B", "dependencies": []},
    {"id": "c", "description": "合并", "dependencies": ["a", "b"]}]}, ensure_ascii=False))
YES = Reply('{"approved": true}')
DONE = ("✅ 多 Agent 协作任务完成！\n\n📋 执行总结：\n[step_1] ✅ 读 A\n   结果：A=1\n[step_2] ✅ 读 B\n   结果：B=2\n"
        "[step_3] ✅ 合并\n   结果：合计 3")


def submitted_text(request: dict) -> str:
    return "\n".join(str(m.get("content")) for m in request["messages"] if m.get("role") == "user")


def test_team_command_runs_the_team_and_a_follow_up_react_turn_sees_its_result(run_paicli, server, paicli_home):
    routes = ByContent({"当前任务：读 A": [Reply("A=1")], "当前任务：读 B": [Reply("B=2")],
                        "当前任务：合并": [Reply("合计 3")], "原始任务：": [YES] * 3, PLANNING: [PLAN]})
    server.script = routes.script()
    done = run_paicli("-p", f"/team {GOAL}", "--session", "s-team")
    assert done.returncode == 0, done.stderr
    assert routes.left() == {}
    assert "👥 使用多 Agent 协作模式" in done.stderr
    assert done.stdout.strip() == DONE
    labels = {(e["mode"], e["actor"]) for e in ledger_lines(paicli_home, "s-team")}
    assert {("team", "orchestrator"), ("team", "planner"), ("team", "worker-1"), ("team", "worker-2")} <= labels

    server.script = server.script + [Reply("合计是 3")]
    follow = run_paicli("-p", "刚才的合计是多少？", "--session", "s-team")
    assert follow.returncode == 0, follow.stderr
    sent = [(m["role"], m["content"]) for m in server.requests[-1]["messages"][1:]]
    assert sent == [("user", GOAL), ("assistant", DONE), ("user", "刚才的合计是多少？")]  # Q20


def ledger_lines(home: Path, session: str) -> list[dict]:
    path = home / "history" / "raw" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def finished_steps(home: Path, session: str) -> set[str]:
    """Step ids whose results the wave's checkpoint holds (read as another process would)."""
    saver = NamespacedSaver(JsonlLedgerSaver(home / "history" / "raw"), "team")
    found = saver.get_tuple({"configurable": {"thread_id": session, "checkpoint_ns": ""}})
    return {uid for _task, channel, value in (found.pending_writes if found else []) if channel == "results"
            for uid in value or {}}  # None: the run's start resetting the wave (merge_results)


@pytest.mark.process
def test_kill_9_mid_step_then_continue_reruns_nothing_that_completed(project, paicli_env, server, paicli_home):
    routes = ByContent({"当前任务：读 A": [Reply("A=1")], "当前任务：读 B": [Hang(60, Reply("too late"))],
                        "原始任务：": [YES], PLANNING: [PLAN]})
    server.script = routes.script()
    child = subprocess.Popen([sys.executable, "-m", "paicli", "--mode", "team", "-p", GOAL, "--session", "s-kill"],
                             cwd=project, env=paicli_env(server.base_url), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + patience(30)
        while finished_steps(paicli_home, "s-kill") != {"step_1"}:
            assert time.monotonic() < deadline and child.poll() is None, "step_1 never finished"
            time.sleep(0.1)
    finally:
        child.kill()  # SIGKILL: no cleanup runs
        child.wait()
    asked = len(server.requests)

    routes.routes.update({"当前任务：读 B": [Reply("B=2")], "当前任务：合并": [Reply("合计 3")], "原始任务：": [YES] * 2})
    server.script = server.script[:asked] + [routes.reply] * 4
    done = subprocess.run([sys.executable, "-m", "paicli", "--session", "s-kill", "--continue"], cwd=project,
                          env=paicli_env(server.base_url), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=run_timeout())
    assert done.returncode == 0, done.stderr
    again = [submitted_text(r) for r in server.requests[asked:]]
    # step B's worker and review, then the merge and its review; step A is not asked again
    assert len(again) == 4 and not any("读 A\n\n执行结果" in t or "当前任务：读 A" in t for t in again)
    assert "A=1" in again[2] and "B=2" in again[2]
    assert done.stdout.strip() == DONE
    nothing = subprocess.run([sys.executable, "-m", "paicli", "--session", "s-kill", "--continue"], cwd=project,
                             env=paicli_env(server.base_url), capture_output=True, text=True, timeout=run_timeout())
    assert nothing.returncode == 0 and "没有未完成的运行" in nothing.stderr
