"""Session modes (reference s.1 item 9) on a real terminal: Shift+Tab cycles auto → plan → ask,
plan mode plans the next ordinary input, ask mode asks for every write; /mode sets one."""

from __future__ import annotations


import pytest

from tests.cli.test_repl_plan import PLANNING, plan_reply
from tests.support.openai_server import ByContent, Reply
from tests.support.pty_terminal import ask

SHIFT_TAB = "\x1b[Z"


@pytest.fixture
def repl(start_repl):
    return start_repl(PAICLI_STATUS_BAR="off")


@pytest.mark.process
def test_shift_tab_cycles_the_modes_and_plan_mode_plans_the_next_input(repl, server):
    routes = ByContent({"当前任务：统计": [Reply("3 个")], "当前任务：汇报": [Reply("汇报好")],
                        PLANNING: [plan_reply(("a", "统计", []), ("b", "汇报", ["a"]))]})
    server.script = routes.script()
    repl.expect("❯")
    repl.type(SHIFT_TAB)
    repl.expect("已切换到 plan 模式：每条输入先规划，审阅后执行")
    repl.type("统计文件数量然后汇报\r")
    repl.expect("📋 使用 Plan-and-Execute 模式")
    repl.expect("操作/补充>")
    repl.type("\r")
    repl.expect("✅ 计划执行完成！")
    assert routes.left() == {}, repl.text
    repl.expect("❯")
    repl.type(SHIFT_TAB)
    repl.expect("已切换到 ask 模式：审批：全部危险操作都确认")
    ask(repl, "/hitl")
    repl.expect("🔒 HITL 当前档位：审批（")
    repl.expect("❯")
    repl.type(SHIFT_TAB)
    repl.expect("已切换到 auto 模式：自动审查，低风险命令直接执行（默认）")
    ask(repl, "/mode")
    repl.expect("当前模式：auto（自动审查，低风险命令直接执行（默认））")
    repl.expect("   /mode plan  - 每条输入先规划，审阅后执行")


@pytest.mark.process
def test_ask_mode_asks_for_a_write(repl, server, project):
    server.script = [Reply("", tool_calls=[{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]),
                     Reply("skipped")]
    ask(repl, "/mode ask")
    repl.expect("已切换到 ask 模式")
    ask(repl, "write a.txt")
    repl.expect("HITL 审批请求")
    repl.expect(">")
    repl.type("s\r")
    repl.expect("skipped")
    assert not (project / "a.txt").exists()


def test_mode_with_an_unknown_name_says_what_exists(run_paicli):
    done = run_paicli("-p", "/mode fast")
    assert done.returncode == 1 and done.stderr.strip() == "未知模式：fast，可选 auto / plan / ask"
    done = run_paicli("-p", "/hitl off")
    assert done.returncode == 1 and "❌ 未知 /hitl 参数: off" in done.stderr


@pytest.mark.process
def test_history_clear_forgets_earlier_inputs(repl, paicli_home):
    ask(repl, "/mode")
    repl.expect("当前模式")
    ask(repl, "/history clear")
    repl.expect("🧹 输入历史已清空")
    assert (paicli_home / "history" / "input.history").read_text() == ""
    repl.expect("❯")
    repl.type("\x1b[A")  # Up: nothing to bring back
    repl.type("\r")
    repl.type("/mode\r")
    repl.expect("当前模式")
    assert "/history clear" not in repl.text.split("🧹 输入历史已清空", 1)[1]
