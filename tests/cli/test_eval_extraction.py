"""`paicli eval extraction` end to end: the golden set against the scripted OpenAI server."""

from __future__ import annotations

import json

from paicli.commands.eval_extraction import load_golden
from tests.support.openai_server import Reply

CALLED = [s for s in load_golden() if s.id != "secret_only"]  # reference (w.3): 17 calls


def oracle(**overrides: str) -> list[Reply]:
    """The gold quotes as the reply for every called sample, in golden-set order."""
    replies = {s.id: json.dumps({"facts": [{"quote": q} for q in s.gold]}, ensure_ascii=False) for s in CALLED}
    replies.update(overrides)
    return [Reply(replies[s.id]) for s in CALLED]


def metric_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if not line.startswith((" ", "✓", "✗"))]


def test_eval_prints_per_sample_results_and_the_metrics(server, run_paicli, paicli_home):
    fenced = "```json\n" + json.dumps({"facts": [{"quote": "我长期习惯用中文回答技术问题"}]}, ensure_ascii=False) + "\n```"
    server.script = oracle(preference_language=fenced)
    done = run_paicli("eval", "extraction", env={"PAICLI_LIGHT_MODEL": "light-m"})
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    assert {r["model"] for r in server.requests} == {"light-m"}
    assert all("tools" not in r for r in server.requests)
    assert "✗ preference_language: 写入 0，标准 1（tp 0，fp 0，fn 1）" in done.stdout
    assert "    整批作废：回复不是单个 JSON 值" in done.stdout  # the reason was English
    assert "✓ secret_only: 写入 0，标准 0（tp 0，fp 0，fn 0）\n    未调用模型" in done.stdout
    assert "✓ two_facts: 写入 2，标准 2（tp 2，fp 0，fn 0）\n    + 我更喜欢简洁的回答\n" in done.stdout
    lines = metric_lines(done.stdout)
    assert lines[0] == "extraction 评测：18 个样本，模型 light-m"
    assert lines[1].startswith("完全正确: 17/18  模型调用: 17  输入/输出 tokens: ")
    assert lines[2:] == [
        "precision: 1.000  recall: 0.917  F1: 0.957",
        "错误写入: 0  负样本错误写入: 0",
        "门槛（F1 >= 0.85，完全正确 >= 15/18，负样本错误写入 0）: 通过",
    ]
    assert not (paicli_home / "memory" / "long_term_memory.json").exists()


def test_a_false_write_on_a_negative_sample_fails_the_gates(server, run_paicli):
    # A verbatim span with no marker passes every deterministic rule: only the model can avoid it.
    leak = json.dumps({"facts": [{"quote": "它不是我们的真实配置"}]}, ensure_ascii=False)
    server.script = oracle(quoted_instruction=leak)
    done = run_paicli("eval", "extraction")
    assert done.returncode == 1, done.stderr
    assert {r["model"] for r in server.requests} == {"m"}  # no light model: the main one
    assert "✗ quoted_instruction: 写入 1，标准 0（tp 0，fp 1，fn 0）\n    + 它不是我们的真实配置" in done.stdout
    assert "precision: 0.923  recall: 1.000  F1: 0.960" in done.stdout
    assert "错误写入: 1  负样本错误写入: 1" in done.stdout
    assert done.stdout.rstrip().endswith("未通过")


def test_an_unreachable_model_is_one_line_naming_the_sample(server, run_paicli):
    server.script = []  # the first call finds the script empty: HTTP 500, not retried
    done = run_paicli("eval", "extraction")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("paicli: extraction 评测在样本 'preference_language' 处停止")
    assert "Traceback" not in done.stderr
