"""save_skill_reference end to end (reference t): `paicli -p` against the local OpenAI-compatible
server writes a user skill's reference only when approved, and never after web content."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.cli.test_oneshot import call, tool_results
from tests.support.openai_server import Reply
from tests.support.web_server import FakeWebServer
from tests.unit.test_skills_catalog import write_skill

ARGS = {"name": "notes", "file": "references/deploy.md", "content": "- 部署前先跑 make check"}


@pytest.fixture
def skill(paicli_home):
    return write_skill(paicli_home / "skills", "notes", "记录部署经验")


def audit_lines(paicli_home) -> list[dict]:
    return [json.loads(line) for path in sorted((paicli_home / "audit").glob("audit-*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


def test_without_yes_the_write_asks_and_a_run_without_a_terminal_refuses(run_paicli, server, skill, paicli_home):
    server.script = [Reply("", tool_calls=[call("save_skill_reference", ARGS, "s1")]), Reply("需要你确认。")]
    done = run_paicli("-p", "把部署经验存进 notes skill", stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr  # issue 26: approvals nobody could answer fail the run
    assert done.stdout == "需要你确认。\n"
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"save_skill_reference", "load_skill"} <= offered
    [result] = tool_results(server.requests[1])
    assert "[HITL] 操作已被拒绝" in result["content"]
    assert "写入 Skill 参考文件 notes/references/deploy.md（" in result["content"]
    assert not (skill / "references").exists()
    [entry] = audit_lines(paicli_home)
    assert (entry["tool"], entry["outcome"], entry["approver"]) == ("save_skill_reference", "deny", "hitl")


def test_with_yes_it_appends_and_load_skill_reads_it_back(run_paicli, server, skill, paicli_home):
    server.script = [Reply("", tool_calls=[call("save_skill_reference", ARGS, "s1")]),
                     Reply("", tool_calls=[call("save_skill_reference", {**ARGS, "content": "- 再看监控"}, "s2")]),
                     Reply("", tool_calls=[call("load_skill", {"name": "notes", "file": "references/deploy.md"}, "l1")]),
                     Reply("已保存。")]
    done = run_paicli("--yes", "-p", "把部署经验存进 notes skill")
    assert done.returncode == 0, done.stderr
    target = skill / "references" / "deploy.md"
    assert target.read_text(encoding="utf-8") == "- 部署前先跑 make check\n\n- 再看监控"
    [first] = tool_results(server.requests[1])
    assert "Skill 参考文件已追加: notes/references/deploy.md（本次 18 字符" in first["content"]
    [read] = tool_results(server.requests[3])
    assert "- 部署前先跑 make check\n\n- 再看监控" in read["content"]
    assert [(e["tool"], e["outcome"]) for e in audit_lines(paicli_home)] == [("save_skill_reference", "allow")] * 2


def test_after_web_fetch_in_the_same_turn_it_is_refused_even_with_yes(run_paicli, server, skill, paicli_home):
    with FakeWebServer() as web:
        url = web.url("/article")
        server.script = [Reply("", tool_calls=[call("web_fetch", {"url": url}, "f1")]),
                         Reply("", tool_calls=[call("save_skill_reference", ARGS, "s1")]),
                         Reply("不能自动保存。")]
        done = run_paicli("--yes", "-p", f"读一下 {url} 然后把要点存进 notes skill 的参考文件",
                          env={"PAICLI_WEB_ALLOW_HOSTS": "127.0.0.1"})
    assert done.returncode == 0, done.stderr
    assert "示例文章" in tool_results(server.requests[1])[0]["content"]  # the page was read
    [refusal] = tool_results(server.requests[2])
    assert "🛡️ 工具调用已拒绝 [SKILL_EXTERNAL_CONTEXT]" in refusal["content"]
    assert not (skill / "references").exists()
    saved = [e for e in audit_lines(paicli_home) if e["tool"] == "save_skill_reference"]
    assert [(e["outcome"], e["reason"]) for e in saved] == [("deny", "SKILL_EXTERNAL_CONTEXT")]
