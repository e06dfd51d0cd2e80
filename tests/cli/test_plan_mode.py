"""``paicli --mode plan -p`` end to end against the local server: parallel tasks, a replan,
``kill -9`` mid-batch then ``--continue``, and a follow-up ReAct turn that sees the result."""

from __future__ import annotations

import json

from tests.support.openai_server import ByContent, Hang, Reply

GOAL = "分别统计 alpha 和 beta 的情况，然后汇总两者"
PLANNING = "请为以下任务制定执行计划"


def plan_reply(tasks: list[dict]) -> Reply:
    return Reply("```json\n" + json.dumps({"summary": "统计并汇总", "tasks": tasks}, ensure_ascii=False) + "\n```")


DAG = [{"id": "a", "description": "统计 alpha", "type": "ANALYSIS"},
       {"id": "b", "description": "统计 beta", "type": "ANALYSIS"},
       {"id": "c", "description": "汇总两者", "type": "ANALYSIS", "dependencies": ["a", "b"]}]


def user_text(request: dict) -> str:
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
    last = user_text(server.requests[-1])
    assert "ALPHA=11" in last and "BETA=22" in last and "当前任务：汇总两者" in last
    assert routes.left() == {}
