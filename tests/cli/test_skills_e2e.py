"""Skills end to end (reference s.6): `paicli -p` against the local OpenAI-compatible server."""

from __future__ import annotations

import json

from tests.support.openai_server import Reply
from tests.unit.test_skills_catalog import write_skill

MARKER = "[PAICLI_SKILL_INJECTION]"


def load_call(name: str) -> Reply:
    return Reply("", tool_calls=[{"name": "load_skill", "arguments": {"name": name}}])


def after_tools(request: dict) -> tuple[dict, dict]:
    """The tool result of the last step and the message after it."""
    messages = request["messages"]
    tool = next(m for m in reversed(messages) if m["role"] == "tool")
    return tool, messages[-1]


def test_a_user_skill_is_listed_in_the_system_prompt_and_injected_on_load(run_paicli, server, paicli_home):
    write_skill(paicli_home / "skills", "review", "审查代码改动时使用", "# 审查\n每个问题给出文件和行号。\n")
    server.script = [load_call("review"), Reply("审查完了")]
    done = run_paicli("--session", "skills-1", "-p", "审查一下这次改动")
    assert done.returncode == 0, done.stderr
    server.assert_consumed()
    system = server.requests[0]["messages"][0]["content"]
    assert "## Skills" in system and "- review（user）：审查代码改动时使用" in system
    assert "- commit-message（builtin）：" in system
    tool, injected = after_tools(server.requests[1])
    assert tool["content"].startswith('<tool_result tool="load_skill" trust="untrusted-data">\n已加载 skill \'review\'')
    assert injected["role"] == "user" and injected["content"].startswith(MARKER + "\n")
    assert f"Skill 目录：{paicli_home / 'skills' / 'review'}" in injected["content"]
    assert "每个问题给出文件和行号。" in injected["content"]
    context = run_paicli("--session", "skills-1", "-p", "/context")
    assert context.returncode == 0, context.stderr
    assert "Skill 索引:" in context.stdout  # issue 26: /context speaks Chinese
    assert any(line.strip().startswith("Skill 正文:") and line.endswith("[1 条]") for line in context.stdout.splitlines())


def test_an_untrusted_project_skill_is_data_until_skill_trust(run_paicli, server, project, paicli_home):
    write_skill(project / ".paicli" / "skills", "deploy", "发布", "运行 ./deploy.sh 发布。\n")
    server.script = [load_call("deploy"), Reply("没有加载")]
    first = run_paicli("-p", "发布一下")
    assert first.returncode == 0, first.stderr
    assert "- deploy（project，未信任）" in server.requests[0]["messages"][0]["content"]
    tool, last = after_tools(server.requests[1])
    assert last is tool  # nothing injected after the result
    assert 'trust="untrusted-data"' in tool["content"] and "用户尚未信任它" in tool["content"]
    assert "运行 ./deploy.sh 发布。" in tool["content"]

    trusted = run_paicli("-p", "/skill trust deploy")
    assert trusted.returncode == 0, trusted.stderr
    assert "🔓 已信任项目 skill 'deploy'" in trusted.stdout
    pins = json.loads((paicli_home / "skills.json").read_text())["trustedProjectSkills"]
    assert pins[0]["path"] == str(project / ".paicli" / "skills" / "deploy" / "SKILL.md")

    server.script += [load_call("deploy"), Reply("按指引发布了")]
    second = run_paicli("-p", "发布一下")
    assert second.returncode == 0, second.stderr
    server.assert_consumed()
    assert "- deploy（project）：发布" in server.requests[2]["messages"][0]["content"]
    tool, injected = after_tools(server.requests[3])
    assert injected["content"].startswith(MARKER) and "## 已加载 Skill：deploy（来源：project）" in injected["content"]
    assert "运行 ./deploy.sh" not in tool["content"]


def test_skill_list_shows_each_skill_and_why_a_broken_one_is_broken(run_paicli, paicli_home, project):
    write_skill(paicli_home / "skills", "review", "审查代码改动时使用")
    write_skill(project / ".paicli" / "skills", "bad", front="name: bad\n")
    done = run_paicli("-p", "/skill list")
    assert done.returncode == 0, done.stderr
    assert "✅ review [user] 可用" in done.stdout
    assert "❌ bad [project] 损坏：front matter 缺少 description" in done.stdout
    assert "✅ commit-message [builtin] 可用" in done.stdout
    missing = run_paicli("-p", "/skill trust nope")
    assert missing.returncode == 1 and "未找到 skill 'nope'" in missing.stderr
