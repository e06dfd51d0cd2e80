"""A step's attempts and reviews (reference s.5 runStep): review never fails a step."""

from __future__ import annotations

from paicli.nodes.team.attempts import DONE, RETRY, REVIEW, Attempts, after_review, after_worker
from paicli.nodes.team.schedule import COMPLETED, FAILED
from paicli.nodes.team.verdict import Verdict

NO = Verdict(False, "- 缺测试")


def test_an_approved_first_result_completes_the_step():
    p, lines, nxt = after_worker(Attempts("step_1"), True, "结果")
    assert (p.accepted, lines, nxt) == ("结果", [], REVIEW)
    p, lines, nxt = after_review(p, Verdict(True))
    assert (p.status, p.accepted, nxt) == (COMPLETED, "结果", DONE)
    assert lines == ["✅ 步骤 [step_1] 审查通过\n"]


def test_a_failing_or_empty_first_run_fails_the_step_without_review():
    p, lines, nxt = after_worker(Attempts("step_1"), False, "LLM 调用失败: boom")
    assert (p.status, p.failure, nxt) == (FAILED, "LLM 调用失败: boom", DONE)
    assert lines == ["❌ 步骤 [step_1] 执行失败：LLM 调用失败: boom\n"]
    p, lines, _ = after_worker(Attempts("step_1"), True, "  ")
    assert (p.status, p.failure, lines) == (FAILED, "执行结果为空", ["❌ 步骤 [step_1] 执行失败：结果为空\n"])


def test_a_rejection_retries_with_its_feedback_then_an_approval_says_after_retry():
    p, _, _ = after_worker(Attempts("step_1"), True, "v1")
    p, lines, nxt = after_review(p, NO)
    assert (p.retries, p.feedback, nxt) == (1, "- 缺测试", RETRY)
    assert lines == ["⚠️ 步骤 [step_1] 审查未通过，正在重新执行...\n   反馈: - 缺测试\n"]
    p, _, nxt = after_worker(p, True, "v2")
    assert (p.accepted, nxt) == ("v2", REVIEW)
    p, lines, nxt = after_review(p, Verdict(True))
    assert (p.status, p.accepted, lines) == (COMPLETED, "v2", ["✅ 步骤 [step_1] 重试后审查通过\n"])


def test_after_two_retries_the_last_accepted_result_is_kept_and_the_step_completes():
    p, _, _ = after_worker(Attempts("step_1"), True, "v1")
    runs = 1
    while True:
        p, lines, nxt = after_review(p, NO)
        if nxt == DONE:
            break
        p, _, _ = after_worker(p, True, f"v{runs + 1}")
        runs += 1
    assert runs == 3  # at most three worker runs per step
    assert (p.status, p.accepted) == (COMPLETED, "v3")
    assert lines == ["⚠️ 步骤 [step_1] 超过最大重试次数，保留当前结果\n"]


def test_a_failing_or_blank_retry_keeps_the_accepted_result_and_retries_with_why():
    p, _, _ = after_worker(Attempts("step_1"), True, "v1")
    p, _, _ = after_review(p, NO)
    p, lines, nxt = after_worker(p, False, "boom")
    assert (p.accepted, p.feedback, p.retries, nxt) == ("v1", "重试时 LLM 调用失败：boom", 2, RETRY)
    p, lines, nxt = after_worker(p, True, "")
    assert (p.status, p.accepted, nxt) == (COMPLETED, "v1", DONE)
    assert lines == ["⚠️ 步骤 [step_1] 超过最大重试次数，保留当前结果\n"]


def test_a_failing_reviewer_keeps_the_workers_result():
    p, _, _ = after_worker(Attempts("step_1"), True, "v1")
    p, lines, nxt = after_review(p, None)
    assert (p.status, p.accepted, nxt) == (COMPLETED, "v1", DONE)
    assert lines == ["⚠️ 步骤 [step_1] 审查阶段 LLM 调用失败，保留当前执行结果\n"]
