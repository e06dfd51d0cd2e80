"""The CLI's pure pieces: tool-call lines, the approval dialog, slash commands."""

import pytest

from paicli import commands
from paicli.approve import ask_approval
from paicli.render import group_lines

REQUEST = {"tool": "execute_command", "args": {"command": "make test"}, "danger": "🔴 高危", "risk": "…"}


def test_tool_calls_are_grouped_by_tool_with_their_key_parameter():
    calls = [{"name": "read_file", "args": {"path": "a.py"}}, {"name": "read_file", "args": {"path": "b.py"}},
             {"name": "execute_command", "args": {"command": "ls"}}, {"name": "custom", "args": {"x": "y" * 100}}]
    assert group_lines(calls) == [
        "📖 读取 2 个文件", "    └ a.py", "    └ b.py", "⚡ 执行 1 条命令", "    └ ls", "🔧 custom × 1",
        "    └ " + ('{"x": "' + "y" * 100)[:77] + "...",
    ]


def scripted_input(*answers):
    queue = list(answers)

    async def read_line(prompt):
        return queue.pop(0) if queue else None

    return read_line


@pytest.mark.parametrize(
    "answers, expected",
    [
        ([""], {"decision": "approve"}),
        (["a"], {"decision": "approve_all"}),
        (["n", "太危险"], {"decision": "reject", "reason": "太危险"}),
        (["s"], {"decision": "skip"}),
        (["m", '{"command": "make lint"}'], {"decision": "edit", "args": {"command": "make lint"}}),
        (["m", "{bad", "y"], {"decision": "approve"}),
        ([], {"decision": "reject", "reason": "输入流已关闭"}),
        (["?"] * 5, {"decision": "reject", "reason": "连续多次无效输入"}),
    ],
)
async def test_approval_dialog_answers(answers, expected):
    said = []
    assert await ask_approval(REQUEST, scripted_input(*answers), said.append) == expected
    assert "────────── ⚠️  HITL 审批请求 ──────────" in said


class FakeApp:
    class settings:
        model, provider, base_url, context_window, light_model = "m", "glm", "http://x", 200_000, "m"

    switched = None

    def switch_model(self, name):
        self.switched = name


async def test_slash_commands():
    said, app = [], FakeApp()
    assert (await commands.handle("/EXIT", app, said.append)).exit
    await commands.handle("/model glm-5.3", app, said.append)
    assert app.switched == "glm-5.3"
    await commands.handle("/bogus x", app, said.append)
    assert said[-len(commands.help_lines()) - 1] == "❌ 未知命令: /bogus x"
    said.clear()
    await commands.handle("cancel", app, said.append)
    assert said == ["当前没有正在运行的任务。"]
