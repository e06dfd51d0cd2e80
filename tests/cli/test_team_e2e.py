"""`paicli --mode team -p` against the local OpenAI-compatible server (reference s.5)."""

from __future__ import annotations

import json
import time

from tests.support.openai_server import Hang, Reply

PLAN = json.dumps({"summary": "汇总", "steps": [
    {"id": "a", "description": "读 A", "dependencies": []},
    {"id": "b", "description": "读 B", "dependencies": []},
    {"id": "c", "description": "合并", "dependencies": ["a", "b"]}]}, ensure_ascii=False)


def submitted_text(request: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"] if m["role"] == "user")


def role(request: dict) -> str:
    system = request["messages"][0]["content"]
    for name in ("Planner", "Reviewer", "Worker"):
        if f"## Mode: Team {name}" in system:
            return name
    return "?"


class Scripted:
    """Answers by content, and notes when each worker request arrived."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}

    def __call__(self, request: dict):
        text, who = submitted_text(request), role(request)
        if who == "Planner":
            return Reply(PLAN)
        if who == "Reviewer":
            rejected = "执行结果：\nA v1" in text
            return Reply('{"approved": false, "issues": ["要写行数"]}' if rejected else '{"approved": true}')
        if "原因：\n- 要写行数" in text:
            return Reply("A v2：3 行")
        for key, answer in (("当前任务：读 A", "A v1"), ("当前任务：读 B", "B 的结果")):
            if key in text:
                self.arrived[key] = time.monotonic()
                return Hang(1.0, Reply(answer))
        return Reply("合并完成") if "当前任务：合并" in text else Reply("?")


def test_team_run_parallel_steps_review_retry_and_dependent_context(server, run_paicli):
    answer = Scripted()
    server.script = [answer] * 9  # planner, 4 worker runs, 4 reviews
    done = run_paicli("--mode", "team", "-p", "汇总两个文件")
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    assert done.stdout.startswith("✅ 多 Agent 协作任务完成！\n\n📋 执行总结：\n[step_1] ✅ 读 A\n   结果：A v2：3 行\n")
    for line in ("📋 第一阶段：规划", "⚡ 第二阶段：执行", "⚡ 批次 #1：2 个独立步骤并行执行（最多 2 个并发 Worker）",
                 "⚠️ 步骤 [step_1] 审查未通过，正在重新执行...", "   反馈: - 要写行数", "✅ 步骤 [step_1] 重试后审查通过",
                 "✅ 步骤 [step_3] 审查通过"):
        assert line in done.stderr.splitlines(), line  # whole lines: a step's own texts name it once
    assert "多 Agent 协作任务" not in done.stderr  # the final text is on stdout only
    # the two independent steps overlapped: each reply is held 1 s, the second arrived before the first's was sent
    assert abs(answer.arrived["当前任务：读 A"] - answer.arrived["当前任务：读 B"]) < 1.0
    requests = server.requests
    # only workers' requests carry tools
    assert all(("tools" in r) == (role(r) == "Worker") for r in requests)
    # the retry saw its feedback once, with its own first attempt kept before it
    [retry] = [r for r in requests if "原因：\n- 要写行数" in submitted_text(r)]
    assert [m["role"] for m in retry["messages"]] == ["system", "user", "user", "assistant", "user"]
    assert retry["messages"][3]["content"] == "A v1"
    # the dependent step got the approved results only
    [merge] = [r for r in requests if role(r) == "Worker" and "当前任务：合并" in submitted_text(r)]
    assert "A v2：3 行" in submitted_text(merge) and "B 的结果" in submitted_text(merge) and "A v1" not in submitted_text(merge)


def test_a_rejected_plan_runs_no_worker_and_exits_1(server, run_paicli):
    server.script = [Reply(PLAN + "\n以上是计划")]
    done = run_paicli("--mode", "team", "-p", "汇总两个文件")
    assert done.returncode == 1
    assert done.stdout == ""  # issue 26: a planning failure goes to stderr, stdout carries only answers
    assert "❌ 规划失败：无法解析执行计划\n原因：JSON 对象之后还有多余内容\n原始输出:\n" in done.stderr
    assert len(server.requests) == 1 and "tools" not in server.requests[0]


def test_a_verdict_that_cannot_be_read_is_previewed_on_stderr_bounded_and_inert(server, run_paicli):
    one_step = json.dumps({"summary": "读", "steps": [{"id": "a", "description": "读 A", "dependencies": []}]},
                          ensure_ascii=False)
    garbled = "审查意见\x1b]52;c;aGk=\x07：大体可以，" + "但是" * 400
    server.script = [Reply(one_step), Reply("A v1"), Reply(garbled), Reply("A v2"), Reply('{"approved": true}')]
    done = run_paicli("--mode", "team", "-p", "读 A")
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    err = done.stderr.splitlines()
    [line] = [x for x in err if "审查结论无法读取" in x]
    assert line.startswith(f"⚠️ reviewer 对步骤 [step_1] 的审查结论无法读取。模型的回复（{len(garbled)} 字符）: "
                           "审查意见␛]52;c;aGk=␇：大体可以，但是")
    assert len(line) < 400 and line.endswith("...")
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    # the verdict still fails closed: the worker retries with the reference's reason, and the run goes on
    assert err.index(line) < err.index("⚠️ 步骤 [step_1] 审查未通过，正在重新执行...")
    assert "✅ 步骤 [step_1] 重试后审查通过" in err
    assert done.stdout.startswith("✅ 多 Agent 协作任务完成！")
