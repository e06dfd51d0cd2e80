"""Plan mode in the interactive REPL on a real pseudo-terminal: ``/plan`` alone plans the next
input, the review executes on Enter or re-plans with a supplement, two parallel approvals are
asked one at a time naming their task, and Ctrl-C cancels the run, which ``/continue`` finishes."""

from __future__ import annotations

import json
import signal
import sys
import time

import pytest

from tests.support.openai_server import ByContent, Hang, Reply
from tests.support.pty_terminal import PtyTerminal
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # the REPL on a pty

PLANNING = "请为以下任务制定执行计划"


def plan_reply(*tasks: tuple) -> Reply:
    items = [{"id": t[0], "description": t[1], "type": "ANALYSIS", "dependencies": list(t[2])} for t in tasks]
    return Reply(json.dumps({"summary": "s", "tasks": items}, ensure_ascii=False))


@pytest.fixture
def repl(project, paicli_env, server):
    # PAICLI_HITL=on: the tasks' commands ask the person (not the default level's auto reviewer)
    env = paicli_env(server.base_url, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", PAICLI_HITL="on")
    terminal = PtyTerminal([sys.executable, "-m", "paicli", "--session", "s-repl"], cwd=str(project), env=env)
    yield terminal
    terminal.close()


def ask(repl: PtyTerminal, text: str) -> None:
    repl.expect("❯")
    repl.type(text + "\r")


def test_plan_alone_plans_the_next_input_and_the_review_replans_with_a_supplement(repl, server):
    routes = ByContent({
        "当前任务：统计": [Reply("3 个")], "当前任务：跑测试": [Reply("全绿")],
        "补充要求：顺便跑测试": [plan_reply(("a", "统计", []), ("b", "跑测试", ["a"]))],
        PLANNING: [plan_reply(("a", "统计", []))]})
    server.script = routes.script()
    ask(repl, "/plan")
    repl.expect("下一条任务将使用 Plan-and-Execute 模式")
    ask(repl, "统计文件数量然后汇报")
    repl.expect("📋 使用 Plan-and-Execute 模式")
    repl.expect("📝 计划已生成：s（1 个任务，1 个批次）")
    repl.expect("操作/补充>")
    repl.type("顺便跑测试\r")
    repl.expect("正在重新规划")
    repl.expect("（2 个任务，2 个批次）")
    repl.expect("操作/补充>")
    repl.type("\r")
    repl.expect("✅ 计划执行完成！")
    repl.expect("[task_2] 全绿")
    assert routes.left() == {}


def test_two_parallel_approvals_are_asked_in_turn_and_ctrl_c_cancels_then_continue_finishes(repl, server, project):
    write = lambda path: {"name": "execute_command", "arguments": {"command": f"echo x > {path}"}}  # noqa: E731
    routes = ByContent({
        "当前任务：写甲": [Reply("", tool_calls=[write("a.txt")]), Reply("甲好")],
        "当前任务：写乙": [Reply("", tool_calls=[write("b.txt")]), Reply("乙好")],
        "当前任务：收尾": [Hang(30, Reply("太晚了")), Reply("收尾好")],
        PLANNING: [plan_reply(("a", "写甲", []), ("b", "写乙", []), ("c", "收尾", ["a", "b"]))]})
    server.script = routes.script()
    ask(repl, "/plan 写两个文件然后收尾")
    repl.expect("操作/补充>")
    repl.type("\r")
    repl.expect("请求审批")
    repl.expect("[a] 全部放行")
    repl.expect(">")
    repl.type("a\r")  # approve all commands: the other task's question is answered with it
    repl.expect("已全部放行，自动批准")
    repl.expect("▶️ 执行任务 [task_3]: 收尾")
    assert (project / "a.txt").exists() and (project / "b.txt").exists()
    deadline = time.monotonic() + patience(30)
    while "当前任务：收尾" not in dict(routes.arrivals):  # task_3 is waiting for the model
        assert time.monotonic() < deadline
        time.sleep(0.05)
    repl.expect("运行中: task_3 · ")  # issue 26: the live status line while the unit waits for its model
    repl.expect("工具调用 2 次")
    # Ctrl-C while the run works: the terminal sends SIGINT (this pty is not the child's
    # controlling terminal, so send it as the terminal would).
    repl.proc.send_signal(signal.SIGINT)
    repl.expect("⏹️ 已取消当前计划执行。")
    repl.expect("⏸️ 运行未完成（会话 s-repl），输入 /continue 继续执行。")  # issue 26
    ask(repl, "/continue")
    repl.expect("✅ 计划执行完成！", timeout=90)
    repl.expect("[task_3] 收尾好")
    repl.expect("📊 Token:")  # issue 26: every unit's calls, counted after the run


LONG = "统计项目里每个目录下的文件数量并按类型分组，" * 3  # longer than the table's column


def test_every_key_the_review_lists_works_ctrl_o_shows_text_supplements_esc_cancels(repl, server, project):
    """The review shows the task table and lists Enter, Ctrl+O, ESC and typed text + Enter.
    Ctrl+O must not run the plan (prompt_toolkit's own Ctrl+O would accept the empty line), and
    ESC must cancel without any task running."""
    routes = ByContent({
        "补充要求：只统计 py 文件": [plan_reply(("a", "统计 py", []), ("b", "汇报", ["a"]))],
        PLANNING: [plan_reply(("a", LONG, []))]})
    server.script = routes.script()
    ask(repl, "/plan 统计文件数量然后汇报")  # not a simple goal: the model plans it
    repl.expect("（1 个任务，1 个批次）")
    table = repl.expect("Enter 执行 · Ctrl+O 展开完整描述 · ESC 取消 · 输入补充要求后按 Enter 重新规划")
    assert "task_1" in table and "ANALYSIS" in table and LONG not in table  # the table, descriptions cut
    repl.expect("操作/补充>")
    repl.type("\x0f")  # Ctrl+O
    shown = repl.expect("已展开完整计划")
    assert LONG.strip() in shown.replace("\n", "")
    repl.expect("操作/补充>")
    repl.type("只统计 py 文件\r")  # typed text + Enter: a supplement
    repl.expect("正在重新规划")
    repl.expect("（2 个任务，2 个批次）")
    repl.expect("操作/补充>")
    repl.type("\x1b")  # ESC
    repl.expect("❯")
    assert routes.left() == {}  # both plans were made; no task ever reached the model
    assert not any(key.startswith("当前任务") for key, _ in routes.arrivals)
