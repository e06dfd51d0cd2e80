"""``paicli --mode plan -p`` end to end against the local server: parallel tasks, a replan,
``kill -9`` mid-batch then ``--continue``, and a follow-up ReAct turn that sees the result."""

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
from tests.support.inprocess import run_in_process
from tests.support.openai_server import ByContent, ErrorReply, Hang, Reply
from tests.support.waiting import patience

GOAL = "分别统计 alpha 和 beta 的情况，然后汇总两者"
PLANNING = "请为以下任务制定执行计划"


def plan_reply(tasks: list[dict]) -> Reply:
    return Reply("```json\n" + json.dumps({"summary": "统计并汇总", "tasks": tasks}, ensure_ascii=False) + "\n```")


DAG = [{"id": "a", "description": "统计 alpha", "type": "ANALYSIS"},
       {"id": "b", "description": "统计 beta", "type": "ANALYSIS"},
       {"id": "c", "description": "汇总两者", "type": "ANALYSIS", "dependencies": ["a", "b"]}]


def submitted_text(request: dict) -> str:
    return "\n".join(str(m.get("content")) for m in request["messages"] if m.get("role") == "user")


def test_plan_runs_independent_tasks_at_once_and_hands_both_results_to_the_third(run_paicli, server):
    routes = ByContent({
        PLANNING: [plan_reply(DAG)],
        "当前任务：统计 alpha": [Hang(1.0, Reply("ALPHA=11"))],
        "当前任务：统计 beta": [Hang(1.0, Reply("BETA=22"))],
        "当前任务：汇总两者": [Reply("合计 33")],
    })
    server.script = routes.script()
    done = run_paicli("--mode", "plan", "-p", GOAL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_3] 合计 33"
    assert "⚡ 本轮并行执行 2 个任务: task_1, task_2" in done.stderr
    arrived = dict(routes.arrivals)
    assert abs(arrived["当前任务：统计 alpha"] - arrived["当前任务：统计 beta"]) < 0.8  # both waited at once
    last = submitted_text(server.requests[-1])
    assert "ALPHA=11" in last and "BETA=22" in last and "当前任务：汇总两者" in last
    assert routes.left() == {}


def test_a_failing_task_replans_and_the_new_plan_completes(run_paicli, server):
    refused = ErrorReply(400, {"error": {"message": "upstream refused", "type": "invalid_request_error"}},
                         {"x-should-retry": "false"})
    routes = ByContent({
        "当前任务：抓取 alpha": [refused],
        "当前任务：改用本地 alpha": [Reply("ALPHA=11")],
        "失败原因: ": [plan_reply([{"id": "n", "description": "改用本地 alpha", "type": "ANALYSIS"}])],
        PLANNING: [plan_reply([{"id": "a", "description": "抓取 alpha", "type": "ANALYSIS"},
                               {"id": "b", "description": "汇总两者", "type": "ANALYSIS", "dependencies": ["a"]}])],
    })
    server.script = routes.script()
    done = run_paicli("--mode", "plan", "-p", GOAL)
    assert done.returncode == 0, done.stderr
    assert "🔄 尝试重新规划（第 1/2 次）..." in done.stderr
    assert "❌ 失败 [task_1]: ❌ 调用 LLM 失败" in done.stderr
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_1] ALPHA=11"
    assert routes.left() == {}


def test_a_plan_that_does_not_complete_exits_1(run_paicli, server):
    server.script = [Reply("这不是计划")]
    done = run_paicli("--mode", "plan", "-p", GOAL)
    assert done.returncode == 1
    assert done.stdout == ""  # issue 26: no summary to give; why, on stderr
    assert "❌ 执行失败: 计划必须是 JSON 对象" in done.stderr.splitlines()
    assert "模型的回复（5 字符）: 这不是计划" in done.stderr.splitlines()


def ledger_lines(home: Path, session: str) -> list[dict]:
    path = home / "history" / "raw" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_run_is_in_the_sessions_ledger_and_a_follow_up_react_turn_sees_its_result(run_paicli, server, paicli_home):
    routes = ByContent({PLANNING: [plan_reply(DAG)], "当前任务：统计 alpha": [Reply("ALPHA=11")],
                        "当前任务：统计 beta": [Reply("BETA=22")], "当前任务：汇总两者": [Reply("合计 33")]})
    server.script = routes.script()
    assert run_paicli("--mode", "plan", "-p", GOAL, "--session", "s-plan").returncode == 0
    lines = ledger_lines(paicli_home, "s-plan")
    labels = {(e["mode"], e["actor"]) for e in lines}
    assert {("plan", "planner"), ("plan", "task:task_1"), ("plan", "task:task_2"), ("plan", "task:task_3")} <= labels
    task_answers = [e for e in lines if e["actor"] == "task:task_3" and e["event"] == "assistant"]
    assert task_answers and "合计 33" in json.dumps(task_answers[0]["message"], ensure_ascii=False)

    server.script = server.script + [Reply("刚才合计是 33")]
    follow = run_paicli("-p", "刚才的合计是多少？", "--session", "s-plan")
    assert follow.returncode == 0, follow.stderr
    sent = [(m["role"], m["content"]) for m in server.requests[-1]["messages"][1:]]
    assert sent == [("user", GOAL), ("assistant", "✅ 计划执行完成！\n[task_3] 合计 33"), ("user", "刚才的合计是多少？")]


def plan_pending_writes(home: Path, session: str) -> set[str]:
    """Task ids whose results the batch's checkpoint holds (read as another process would)."""
    saver = NamespacedSaver(JsonlLedgerSaver(home / "history" / "raw"), "plan")
    found = saver.get_tuple({"configurable": {"thread_id": session, "checkpoint_ns": ""}})
    return {uid for _task, channel, value in (found.pending_writes if found else []) if channel == "results"
            for uid in value}


@pytest.mark.process
def test_kill_9_mid_batch_then_continue_reruns_nothing_that_completed(project, paicli_env, server, paicli_home):
    routes = ByContent({PLANNING: [plan_reply(DAG)], "当前任务：统计 alpha": [Reply("ALPHA=11")],
                        "当前任务：统计 beta": [Hang(60, Reply("too late"))]})
    server.script = routes.script()
    child = subprocess.Popen([sys.executable, "-m", "paicli", "--mode", "plan", "-p", GOAL, "--session", "s-kill"],
                             cwd=project, env=paicli_env(server.base_url), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + patience(30)
        while plan_pending_writes(paicli_home, "s-kill") != {"task_1"}:
            assert time.monotonic() < deadline and child.poll() is None, "task_1 never finished"
            time.sleep(0.1)
    finally:
        child.kill()  # SIGKILL: no cleanup runs
        child.wait()
    asked = len(server.requests)

    routes.routes.update({"当前任务：统计 beta": [Reply("BETA=22")], "当前任务：汇总两者": [Reply("合计 33")]})
    server.script = server.script[:asked] + [routes.reply] * 2
    # Only the killed run needs a process of its own; the runs that finish it go in process.
    done = run_in_process(["--session", "s-kill", "--continue"], cwd=project, env=paicli_env(server.base_url),
                          timeout=run_timeout())
    assert done.returncode == 0, done.stderr
    again = [submitted_text(r) for r in server.requests[asked:]]
    assert len(again) == 2 and not any("当前任务：统计 alpha" in t for t in again)  # task_1 kept its result
    assert "ALPHA=11" in again[-1] and "BETA=22" in again[-1]
    assert done.stdout.strip() == "✅ 计划执行完成！\n[task_3] 合计 33"
    nothing = run_in_process(["--session", "s-kill", "--continue"], cwd=project, env=paicli_env(server.base_url),
                             timeout=run_timeout())
    assert nothing.returncode == 0 and "没有未完成的运行" in nothing.stderr
