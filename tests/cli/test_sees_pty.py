"""Issue 41 ("What a person sees II") on a real terminal, at 120 and 80 columns: one test per
item, each looking at what the screen shows (``PtyTerminal.screen``, a VT100 emulator)."""

from __future__ import annotations

import sys

import pytest
from rich.cells import cell_len

from tests.support.openai_server import Reply
from tests.support.pty_terminal import PtyTerminal, ask

pytestmark = pytest.mark.process  # the REPL on a pty

COLUMNS = [pytest.param(120, id="120-columns"), pytest.param(80, id="80-columns")]
GBK_SOURCE = "# -*- coding: gbk -*-\n# 读取数据库配置\ndef 读取配置():\n    return '你好，世界'\n"


def call(name: str, arguments: dict, call_id: str | None = None) -> dict:
    return {"name": name, "arguments": arguments, **({"id": call_id} if call_id else {})}


@pytest.fixture
def open_repl(project, paicli_env, server):
    """``open_repl(columns, **env)``: the REPL on a pty of that width, answering cursor position
    requests so prompt_toolkit draws its bottom toolbar (the status bar)."""
    terminals: list[PtyTerminal] = []

    def start(columns: int, **env: str) -> PtyTerminal:
        environ = paicli_env(server.base_url, TERM="xterm", **env)
        terminals.append(PtyTerminal([sys.executable, "-m", "paicli"], cwd=str(project), env=environ,
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
