"""Issue 41, item 1, end to end: a GBK and a Latin-1 source file are read as text (the encoding
named to the model), searched, and edited by ``paicli -p`` with their encoding kept."""

from __future__ import annotations

from tests.cli.test_oneshot import call, tool_results
from tests.support.openai_server import Reply

GBK_SOURCE = "# -*- coding: gbk -*-\n# 读取数据库配置\ndef 读取配置():\n    return '你好，世界'\n"
LATIN1_SOURCE = "# Grüße aus München\nprint('déjà vu')\n"


def test_a_gbk_and_a_latin1_file_are_read_and_edited_with_their_encoding_kept(server, run_paicli, project):
    (project / "gbk_src.py").write_bytes(GBK_SOURCE.encode("gbk"))
    (project / "latin.py").write_bytes(LATIN1_SOURCE.encode("latin-1"))
    server.script = [
        Reply("", tool_calls=[call("grep_code", {"pattern": "读取配置"}), call("read_file", {"path": "gbk_src.py"}),
                              call("read_file", {"path": "latin.py"})]),
        Reply("", tool_calls=[call("edit_file", {"path": "gbk_src.py", "old_text": "你好，世界", "new_text": "再见，世界"}),
                              call("edit_file", {"path": "latin.py", "old_text": "déjà vu", "new_text": "à bientôt"})]),
        Reply("改好了。"),
    ]
    done = run_paicli("-p", "把问候语改一下", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "改好了。\n"
    server.assert_consumed()
    grep, gbk, latin = (r["content"] for r in tool_results(server.requests[1]))
    assert "gbk_src.py:3" in grep and "def 读取配置():" in grep
    assert f"文件内容（编码: GBK）:\n{GBK_SOURCE}" in gbk
    assert f"文件内容（编码: Windows-1252）:\n{LATIN1_SOURCE}" in latin
    edited = [r["content"] for r in tool_results(server.requests[2])]
    assert "文件已编辑: gbk_src.py（保留 GBK 编码）" in edited[0]
    assert "文件已编辑: latin.py（保留 Windows-1252 编码）" in edited[1]
    assert (project / "gbk_src.py").read_bytes() == GBK_SOURCE.replace("你好", "再见").encode("gbk")
    assert (project / "latin.py").read_bytes() == LATIN1_SOURCE.replace("déjà vu", "à bientôt").encode("latin-1")
