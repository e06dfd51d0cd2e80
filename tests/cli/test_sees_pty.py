"""Issue 41 ("What a person sees II") on a real terminal, at 120 and 80 columns: one test per
item, each looking at what the screen shows (``PtyTerminal.screen``, a VT100 emulator)."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.support.openai_server import ByContent, ErrorReply, Hang, Reply
from tests.support.pty_terminal import PtyTerminal, ask
from tests.support.waiting import patience

pytestmark = pytest.mark.process  # the REPL on a pty

COLUMNS = [pytest.param(120, id="120-columns"), pytest.param(80, id="80-columns")]
GBK_SOURCE = "# -*- coding: gbk -*-\n# 读取数据库配置\ndef 读取配置():\n    return '你好，世界'\n"


def call(name: str, arguments: dict, call_id: str | None = None) -> dict:
    return {"name": name, "arguments": arguments, **({"id": call_id} if call_id else {})}


@pytest.fixture
def open_repl(project, paicli_env, server):
    """``open_repl(columns, *args, **env)``: ``paicli *args`` on a pty of that width, answering
    cursor position requests so prompt_toolkit draws its bottom toolbar (the status bar)."""
    terminals: list[PtyTerminal] = []

    def start(columns: int, *args: str, **env: str) -> PtyTerminal:
        environ = paicli_env(server.base_url, TERM="xterm", **env)
        terminals.append(PtyTerminal([sys.executable, "-m", "paicli", *args], cwd=str(project), env=environ,
                                     columns=columns, answer_cpr=True))
        return terminals[-1]

    yield start
    for terminal in terminals:
        terminal.close()


def fits(screen: list[str], columns: int) -> None:
    for row in screen:
        assert cell_len(row) <= columns, row


@pytest.mark.parametrize("columns", COLUMNS)
def test_item1_a_gbk_file_is_read_and_its_edit_shown_in_chinese(open_repl, server, project, columns):
    (project / "gbk_src.py").write_bytes(GBK_SOURCE.encode("gbk"))
    server.script = [
        Reply("", tool_calls=[call("read_file", {"path": "gbk_src.py"})]),
        Reply("", tool_calls=[call("edit_file", {"path": "gbk_src.py", "old_text": "你好，世界",
                                                 "new_text": "再见，世界"})]),
        Reply("改好了"),
    ]
    repl = open_repl(columns)
    ask(repl, "改一下问候语")
    repl.expect("改好了")
    repl.settle()
    screen = "\n".join(repl.screen())
    assert "↳ gbk_src.py" in screen and "⎿ +1 -1 行" in screen
    assert "│ -    return '你好，世界'" in screen and "│ +    return '再见，世界'" in screen
    assert (project / "gbk_src.py").read_bytes() == GBK_SOURCE.replace("你好", "再见").encode("gbk")
    server.assert_consumed()


@pytest.mark.parametrize("columns", COLUMNS)
def test_item2_an_overwrite_shows_its_diff_in_the_question_and_after(open_repl, server, project, columns):
    (project / "notes.txt").write_text("第一行\n要删掉的一行\n最后一行\n", encoding="utf-8")
    server.script = [
        Reply("", tool_calls=[call("write_file", {"path": "notes.txt", "content": "第一行\n新的一行\n最后一行\n"})]),
        Reply("写好了"),
    ]
    repl = open_repl(columns, PAICLI_HITL="on")
    ask(repl, "重写 notes.txt")
    repl.expect("将改动（与现有文件比较）:")
    repl.expect("请选择操作")
    repl.settle()
    question = "\n".join(repl.screen())
    assert "⎿ +1 -1 行，" in question and "│ -要删掉的一行" in question and "│ +新的一行" in question
    assert (project / "notes.txt").read_text(encoding="utf-8").startswith("第一行\n要删掉的一行")  # not yet
    repl.type("y\r")
    repl.expect("写好了")
    repl.settle()
    after = repl.text[repl.text.index("已批准"):]
    assert "↳ notes.txt" in after and "│ -要删掉的一行" in after and "│ +新的一行" in after
    assert (project / "notes.txt").read_text(encoding="utf-8") == "第一行\n新的一行\n最后一行\n"
    fits(repl.screen(), columns)
    server.assert_consumed()


PLANNING = "请为以下任务制定执行计划"
LONG_TASK = "读取配置文件中的数据库连接参数并逐项核对它们是否与部署文档里写的保持一致"


def plan_reply(*tasks: tuple, usage: tuple[int, int] = (1000, 100)) -> Reply:
    items = [{"id": t[0], "description": t[1], "type": "ANALYSIS", "dependencies": list(t[2])} for t in tasks]
    return Reply(json.dumps({"summary": "核对数据库配置与部署文档", "tasks": items}, ensure_ascii=False), usage=usage)


def status_bar(repl: PtyTerminal) -> str:
    """The bottom toolbar: the last row the screen shows."""
    repl.settle()
    return [row for row in repl.screen() if row.strip()][-1]


@pytest.mark.parametrize("columns", COLUMNS)
def test_item3_the_bar_shows_a_plan_runs_totals_and_fits_and_the_review_table_fits(open_repl, server, project,
                                                                                    paicli_home, columns):
    (paicli_home / "config.json").write_text(json.dumps({"prices": {"m": {"input": 2, "output": 8}}}))
    routes = ByContent({"当前任务：读取配置文件": [Reply("一致", usage=(2000, 200))],
                        PLANNING: [plan_reply(("a", LONG_TASK, []))]})
    server.script = routes.script()
    repl = open_repl(columns)
    repl.expect("模式 auto")
    before = status_bar(repl)
    assert "模式 auto" in before and "上下文 -/128.0k" in before and cell_len(before) < columns
    repl.type("/plan 核对数据库配置\r")
    repl.expect("操作/补充>")
    repl.settle()
    rows = repl.screen()
    task_row = next(row for row in rows if "task_1" in row)
    assert task_row.endswith("…") and LONG_TASK[:8] in task_row  # cut by cells: on one row
    fits(rows, columns)
    repl.type("\r")
    repl.expect("计划执行完成")
    repl.expect("模式 auto")
    bar = status_bar(repl)
    assert cell_len(bar) < columns and "模式 auto" in bar and "上下文 " in bar
    if columns == 120:  # every field but the skill count fits
        assert "本轮 输入 3000 输出 300 缓存 0" in bar and "¥0.0084" in bar and "HITL default" in bar
    else:  # what does not fit is dropped, lowest first, and the bar says so
        assert bar.endswith(" · …") and "Skill" not in bar
    assert routes.left() == {}


@pytest.mark.parametrize("columns", COLUMNS)
def test_item3_after_continue_the_bar_shows_that_runs_totals(open_repl, server, project, columns):
    routes = ByContent({"当前任务：收尾": [Hang(30, Reply("太晚了")), Reply("收尾好", usage=(4000, 400))],
                        PLANNING: [plan_reply(("a", "收尾", []), usage=(1000, 100))]})
    server.script = routes.script()
    first = open_repl(columns, PAICLI_SESSION_WAIT="5")
    ask(first, "/plan 收尾")
    first.expect("操作/补充>")
    first.type("\r")
    deadline = time.monotonic() + patience(30)
    while "当前任务：收尾" not in dict(routes.arrivals):  # the task waits for the model
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first.expect("运行中: task_1 · ")
    first.proc.send_signal(signal.SIGINT)  # Ctrl-C while the task waits (the pty is not its controlling tty)
    first.expect("运行未完成")
    first.expect("❯")
    first.type("\x04")
    first.expect("会话已保存，继续：paicli --session ")
    sid = first.text.rsplit("paicli --session ", 1)[1].split()[0]
    assert first.proc.wait(timeout=patience(30)) == 0
    second = open_repl(columns, "--session", sid, "--continue")
    second.expect("收尾好")
    second.expect("模式 auto")
    bar = status_bar(second)
    assert cell_len(bar) < columns and "模式 auto" in bar
    if columns == 120:
        assert "本轮 输入 4000 输出 400 缓存 0" in bar  # the continued run's call, not zero
    assert routes.left() == {}


def model_asked(server, within: float = 30) -> None:
    """Returns once the running turn's first request reached the model."""
    deadline = time.monotonic() + within
    while len(server.requests) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.parametrize("columns", COLUMNS)
def test_item4_esc_cancels_a_running_turn_as_ctrl_c_does(open_repl, server, columns):
    server.script = [Hang(30, Reply("太晚了")), Reply("第二轮")]
    repl = open_repl(columns)
    ask(repl, "慢慢想")
    model_asked(server)  # the turn waits for the model
    repl.type("\x1b")
    repl.expect("⏹️ 已取消当前任务。")
    ask(repl, "再来")
    repl.expect("第二轮")
    assert "太晚了" not in repl.text
    fits(repl.screen(), columns)


@pytest.mark.parametrize("columns", COLUMNS)
def test_item4_a_line_typed_with_enter_while_a_run_works_runs_after_it(open_repl, server, columns):
    """What the cooked terminal would have done: a line + Enter typed during a run runs once the
    run ends (shown after the prompt), the text typed after it waits in the next prompt."""
    server.script = [Hang(2, Reply("第一轮的回答")), Reply("第二轮的回答")]
    repl = open_repl(columns)
    ask(repl, "慢慢想")
    model_asked(server)  # the turn waits for the model
    repl.type("再来一轮\r/he")
    repl.expect("第一轮的回答")
    repl.expect("第二轮的回答")  # the typed line ran as a turn of its own
    assert [m["content"] for m in server.requests[1]["messages"] if m["role"] == "user"][-1] == "再来一轮"
    repl.settle()
    assert any(row.rstrip().endswith("❯ /he") for row in repl.screen())  # the rest waits, unsent
    repl.type("lp\r")
    repl.expect("可用命令：")
    fits(repl.screen(), columns)


@pytest.mark.parametrize("columns", COLUMNS)
def test_item4_esc_at_the_prompt_drops_a_pending_plan_which_the_prompt_shows(open_repl, server, columns):
    server.script = [Reply("普通回答")]
    repl = open_repl(columns)
    ask(repl, "/plan")
    repl.expect("下一条任务将使用 Plan-and-Execute 模式")
    repl.expect("[plan] ❯")  # the prompt says the next input will be planned
    repl.settle()
    repl.type("\x1b")
    repl.expect("↩️ 已取消待执行的 Plan-and-Execute，回到默认 ReAct。")
    repl.expect("❯")
    repl.settle()
    prompts = [row for row in repl.screen() if "❯" in row]
    assert prompts[-1] == "❯"  # the prompt is plain again
    repl.type("你好\r")
    repl.expect("普通回答")
    assert "请为以下任务制定执行计划" not in str(server.requests[0]["messages"])  # a ReAct turn, not a plan
    ask(repl, "/team")
    repl.expect("[team] ❯")
    repl.type("/cancel\r")
    repl.expect("↩️ 已取消待执行的多 Agent 协作，回到默认 ReAct。")
    server.assert_consumed()


@pytest.mark.parametrize("columns", COLUMNS)
def test_item4_bare_clear_asks_before_emptying_the_conversation(open_repl, server, columns):
    server.script = [Reply("记住了"), Reply("你说过：蓝色")]
    repl = open_repl(columns)
    ask(repl, "我喜欢蓝色")
    repl.expect("记住了")
    ask(repl, "clear")
    repl.expect("无法再用 /resume 找回")
    repl.type("n\r")
    repl.expect("已取消，对话保持不变")
    ask(repl, "我喜欢什么颜色？")
    repl.expect("你说过：蓝色")
    assert "我喜欢蓝色" in str(server.requests[1]["messages"])  # nothing was cleared
    ask(repl, "clear")
    repl.expect("无法再用 /resume 找回")
    repl.type("y\r")
    repl.expect("🗑️ 当前对话历史已清空")
    server.assert_consumed()


@pytest.mark.parametrize("columns", COLUMNS)
def test_item5_retries_show_their_wait_a_cut_answer_shows_once_and_the_last_error_says_what_to_do(
        open_repl, server, columns):
    partial = "这是一个很长的回答，分成好几段发送给你看看"
    server.script = [ErrorReply(429, {"error": {"message": "rate limited"}}, {"retry-after": "1"}),
                     Reply(partial, finish_reason=None, done=False), Reply(partial + "，现在完整了。"),
                     *[ErrorReply(503, {"error": {"message": "overloaded"}}, {"retry-after-ms": "1"})] * 4]
    repl = open_repl(columns)
    ask(repl, "说点什么")
    repl.expect("⟳ 第 1 次重试（429，等待 1 秒）")
    repl.expect("现在完整了。")
    repl.expect("📊 Token")
    repl.settle()
    screen = "\n".join(repl.screen())
    assert "正在重试一次" in screen
    assert screen.count(partial) == 1  # the cut answer was erased; the retried one is shown once
    ask(repl, "再来")
    for n in (1, 2, 3):
        repl.expect(f"⟳ 第 {n} 次重试（503，等待 0.0 秒）")
    repl.expect("❌ 调用 LLM 失败: HTTP 503: overloaded（模型服务内部出错，已重试 3 次；")
    repl.expect("❯")
    server.assert_consumed()


@pytest.mark.parametrize("columns", COLUMNS)
def test_item6_echo_task_into_paicli_on_a_terminal_answers_without_a_repl(project, paicli_env, server, columns):
    server.script = [Reply("管道里的回答")]
    env = paicli_env(server.base_url, TERM="xterm")
    shell = PtyTerminal(["bash", "-c", f"echo 你好 | {sys.executable} -m paicli; echo exit=$?"], cwd=str(project),
                        env=env, columns=columns)
    try:
        shell.expect("管道里的回答")
        shell.expect("exit=0")
        assert "❯" not in shell.text and "HITL default" not in shell.text  # no prompt, no status bar
        fits(shell.screen(), columns)
    finally:
        shell.close()
    server.assert_consumed()


@pytest.mark.parametrize("columns", COLUMNS)
def test_item7_offloaded_output_says_where_it_is_and_memory_times_read_as_snapshots(open_repl, server, project,
                                                                                     columns):
    server.script = [Reply("", tool_calls=[call("execute_command", {"command": "seq 300000"})]), Reply("数完了")]
    repl = open_repl(columns, "--yes")
    ask(repl, "数到三十万")
    repl.expect("数完了")
    seen = repl.text
    assert "⎿ exit code 0 · 输出 300000 行，前 299995 行未显示（完整输出已保存到 .paicli/tool-outputs/" in seen
    assert "│ 300000" in seen
    saved = seen.split("完整输出已保存到 ", 1)[1].split("）", 1)[0]
    assert (project / saved).read_text(encoding="utf-8").splitlines()[-1] == "300000"
    ask(repl, "/save 数据库端口是 5432")
    repl.expect("已保存到长期记忆")
    ask(repl, "/memory list")
    line = repl.expect("数据库端口是 5432\n")
    assert "写入 " in line and "Z ·" not in line and "T0" not in line  # local, to the second, as /snapshot's
    ask(repl, "/memory")
    status = repl.expect("当前项目作用域")
    assert "MCP 资源索引: 关闭" in status and "window:" not in status and "cached:" not in status
    server.assert_consumed()


@pytest.mark.parametrize("columns", COLUMNS)
def test_item7_continue_offers_the_run_the_banner_named(open_repl, server, project, columns):
    routes = ByContent({"当前任务：收尾": [Hang(30, Reply("太晚了")), Reply("收尾好")],
                        PLANNING: [plan_reply(("a", "收尾", []))]})
    server.script = routes.script()
    first = open_repl(columns)
    ask(first, "/plan 收尾")
    first.expect("操作/补充>")
    first.type("\r")
    deadline = time.monotonic() + patience(30)
    while "当前任务：收尾" not in dict(routes.arrivals):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first.proc.send_signal(signal.SIGINT)
    first.expect("运行未完成")
    ask(first, "/exit")
    first.expect("会话已保存")
    assert first.proc.wait(timeout=patience(30)) == 0
    second = open_repl(columns)  # a new session: the banner names the other one's run
    second.expect("有未完成的 plan")
    ask(second, "/continue")
    second.expect("其他输入取消：")
    second.type("y\r")
    second.expect("✅ 已切换到会话 ")
    second.expect("收尾好")
    second.expect("计划执行完成")
    assert routes.left() == {}


MCP_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


@pytest.mark.parametrize("columns", COLUMNS)
def test_item8_a_failed_server_is_told_and_a_timed_out_one_fails_fast_until_restart(open_repl, server, paicli_home,
                                                                                     columns):
    servers = {"demo": {"command": sys.executable, "args": [MCP_SERVER]}, "ghost": {"command": "no-such-mcp-server-h41"}}
    (paicli_home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    server.script = [Reply("", tool_calls=[call("mcp__demo__slow", {"seconds": 30})]),
                     Reply("", tool_calls=[call("mcp__demo__echo", {"text": "再试"})]), Reply("它没有响应"),
                     Reply("", tool_calls=[call("mcp__demo__echo", {"text": "回来了吗"})]), Reply("回来了")]
    repl = open_repl(columns, "--yes", PAICLI_MCP_TOOL_TIMEOUT_SECONDS="1", PAICLI_MCP_STARTUP_WAIT_SECONDS="60")
    ask(repl, "调用 demo")
    repl.expect("⚠️ MCP server ghost 启动失败或已断开")
    repl.expect("→ MCP 工具调用失败: demo.slow 超过 1 秒未返回")
    started = time.monotonic()
    repl.expect("→ MCP 工具调用失败: server demo 当前不可用（unhealthy")
    assert time.monotonic() - started < 5  # at once, not another timeout
    repl.expect("它没有响应")
    ask(repl, "/mcp")
    repl.expect("无响应")
    ask(repl, "/mcp restart demo")
    repl.expect("正在启动")
    ask(repl, "再调用一次")
    repl.expect("\n回来了\n")  # the answer (the call's own line says 回来了吗)
    assert "echo: 回来了吗" in str(server.requests[-1]["messages"])
    server.assert_consumed()
