"""The CLI's pure pieces: tool-call lines, the approval dialog, slash commands."""

import pytest

from paicli.ui.approve import ENTER_IS_NOT_YES, ask_approval
from paicli.commands import dispatch as commands
from paicli.ui.render import group_lines
from tests.support import named

REQUEST = {"tool": "execute_command", "args": {"command": "make test"}, "danger": "🔴 高危", "risk": "…"}
LOW_RISK = {"tool": "write_file", "args": {"path": "a.txt", "content": "x"}, "danger": "🟡 中危", "risk": "…"}


def test_tool_calls_are_grouped_by_tool_with_their_key_parameter():
    calls = [{"name": "read_file", "args": {"path": "a.py"}}, {"name": "read_file", "args": {"path": "b.py"}},
             {"name": "execute_command", "args": {"command": "ls"}}, {"name": "custom", "args": {"x": "y" * 100}}]
    assert group_lines(calls, named.facts) == [
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
        (["y"], {"decision": "approve"}),
        (["", "y"], {"decision": "approve"}),
        ([""] * 5, {"decision": "reject", "reason": "连续多次无效输入"}),
        (["m", "", "n", ""], {"decision": "reject", "reason": ""}),
        (["m"], {"decision": "reject", "reason": "输入流已关闭"}),
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


async def test_enter_alone_does_not_approve_a_high_risk_call():
    said = []
    assert await ask_approval(REQUEST, scripted_input("", "y"), said.append) == {"decision": "approve"}
    assert said.count(ENTER_IS_NOT_YES) == 1
    assert said[said.index(ENTER_IS_NOT_YES) - 1].startswith("请选择操作：[y] 批准")


@pytest.mark.parametrize("answers", [[""], ["m", ""]])
async def test_enter_still_approves_a_lower_risk_call(answers):
    said = []
    assert await ask_approval(LOW_RISK, scripted_input(*answers), said.append) == {"decision": "approve"}
    assert ENTER_IS_NOT_YES not in said and said[-1] != ENTER_IS_NOT_YES


class FakeApp:
    class settings:
        model, provider, base_url, context_window, light_model = "m", "glm", "http://x", 200_000, "m"
        window_known = True

    switched = None
    next_mode = None

    def switch_model(self, name):
        self.switched = name
        return self.settings


async def test_slash_commands():
    said, app = [], FakeApp()
    assert (await commands.handle("/EXIT", app, said.append)).exit
    await commands.handle("/model glm-5.3", app, said.append)
    assert app.switched == "glm-5.3"
    unknown = await commands.handle("/bogus x", app, said.append, scripted_input())
    assert said[-len(commands.help_lines()) - 1] == "❌ 未知命令: /bogus x" and unknown.failed
    said.clear()
    await commands.handle("cancel", app, said.append)
    assert said == ["当前没有正在运行的任务。"]
    said.clear()
    await commands.handle("/team", app, said.append)  # issue 41: /cancel drops what /team left pending
    await commands.handle("/cancel", app, said.append)
    assert said[-1] == "↩️ 已取消待执行的多 Agent 协作，回到默认 ReAct。" and app.next_mode is None


class Clearing(FakeApp):
    cleared = 0

    @property
    def session(self):
        return self

    async def clear(self):
        self.cleared += 1


async def test_bare_clear_asks_first_and_slash_clear_does_not():
    said, app = [], Clearing()
    await commands.handle("clear", app, said.append, scripted_input("n"))
    assert app.cleared == 0 and said == ["已取消，对话保持不变（清空请输入 /clear）。"]
    await commands.handle("clear", app, said.append, scripted_input("y"))
    await commands.handle("/clear", app, said.append, scripted_input())
    await commands.handle("clear", app, said.append)  # -p clear: typed on purpose, nobody to ask
    assert app.cleared == 3 and said[-1] == "🗑️ 当前对话历史已清空，长期记忆保持不变"


async def test_a_failing_command_says_why_once_where_failures_go():
    said, failed = [], []
    out = commands.Output(said.append, failed.append)
    outcome = await commands.handle("/bogus x", FakeApp(), out)  # no read_line: a script, no help list
    assert outcome.failed and failed == ["❌ 未知命令: /bogus x"] and said == []
    assert not (await commands.handle("/help", FakeApp(), commands.Output(said.append, failed.append))).failed


async def test_edited_arguments_that_are_not_json_say_where_in_chinese():
    said = []
    assert await ask_approval(REQUEST, scripted_input("m", '{"command": ls}', "n", ""), said.append) == {
        "decision": "reject", "reason": ""}
    assert "  ❌ 修改后的参数不是合法 JSON：第 1 行第 13 列有误" in said


def test_memory_times_are_local_to_the_second_with_the_year_only_when_it_differs():
    from datetime import UTC, datetime

    from paicli.commands.memory import shown_time

    when = datetime(2026, 9, 23, 8, 0, 0, 61187, tzinfo=UTC)
    local = when.astimezone()
    assert shown_time(when, now=datetime(2026, 12, 1, tzinfo=UTC)) == local.strftime("%m-%d %H:%M:%S")
    assert shown_time(when, now=datetime(2027, 1, 5, tzinfo=UTC)) == local.strftime("%Y-%m-%d %H:%M:%S")


def test_approve_all_of_a_protected_write_says_that_such_writes_still_ask():
    """Issue 41: "approve all" never covers a question with a notice; the answer must not promise it."""
    from paicli.ui.approve import approved_all_line

    plain = {"tool": "write_file", "args": {"path": "a.txt"}}
    protected = {**plain, "notice": "受保护路径 PAI.md（项目指令）"}
    assert approved_all_line(plain) == "  已批准，后续 write_file 操作将自动通过"
    assert approved_all_line(protected) == ("  已批准本次；后续 write_file 操作中的普通调用将自动通过，"
                                            "像这次这样需要提示的操作仍会每次询问")
