"""Team mode in the interactive REPL on a real pseudo-terminal: ``/team`` alone runs the next
input as a team, the input after it is a ReAct turn again that sees the team's result (Q20), and
``--mode team`` makes every input a team run."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.openai_server import ByContent, Reply
from tests.support.pty_terminal import PtyTerminal

pytestmark = pytest.mark.process  # the REPL on a pty

PLANNING = "请为以下任务制定执行计划"
PLAN = Reply(json.dumps({"summary": "s", "steps": [{"id": "a", "description": "统计", "dependencies": []}]},
                        ensure_ascii=False))
YES = Reply('{"approved": true}')


def start(project, paicli_env, server, *flags: str) -> PtyTerminal:
    env = paicli_env(server.base_url, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    return PtyTerminal([sys.executable, "-m", "paicli", "--session", "s-repl", *flags], cwd=str(project), env=env)


@pytest.fixture
def terminals():
    opened: list[PtyTerminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def ask(repl: PtyTerminal, text: str) -> None:
    repl.expect("❯")
    repl.type(text + "\r")


def test_team_alone_runs_the_next_input_as_a_team_then_react_sees_the_result(project, paicli_env, server, terminals):
    routes = ByContent({"当前任务：统计": [Reply("共 3 个")], "原始任务：": [YES], PLANNING: [PLAN],
                        "刚才统计": [Reply("刚才是 3 个")]})
    server.script = routes.script()
    repl = start(project, paicli_env, server)
    terminals.append(repl)
    ask(repl, "/team")
    repl.expect("下一条任务将使用多 Agent 协作模式（规划者 + 执行者 + 检查者）")
    ask(repl, "统计文件数量")
    repl.expect("👥 使用多 Agent 协作模式")
    repl.expect("✅ 多 Agent 协作任务完成！")
    repl.expect("结果：共 3 个")
    ask(repl, "刚才统计了几个？")
    repl.expect("刚才是 3 个")
    assert routes.left() == {}
    react = server.requests[-1]
    assert "tools" in react and "## Mode: Team" not in react["messages"][0]["content"]
    assert [m["role"] for m in react["messages"][1:]] == ["user", "assistant", "user"]  # Q20: goal, team result
    assert react["messages"][2]["content"].startswith("✅ 多 Agent 协作任务完成！")


def test_mode_team_runs_every_input_as_a_team(project, paicli_env, server, terminals):
    routes = ByContent({"当前任务：统计": [Reply("共 3 个")], "原始任务：": [YES], PLANNING: [PLAN]})
    server.script = routes.script()
    repl = start(project, paicli_env, server, "--mode", "team")
    terminals.append(repl)
    ask(repl, "统计文件数量")
    repl.expect("👥 使用多 Agent 协作模式")
    repl.expect("✅ 多 Agent 协作任务完成！")
    assert routes.left() == {}
