"""issue 38 end to end: `paicli -p` with real language servers and the fake model server.

A scripted `edit_file` breaks a file (a type error and a syntax error); the next request to the
model carries both, with file and line, in one internal message; a later edit that fixes them
leaves no diagnostics message; the ledger holds the `lsp_diagnostics` event; `--verbose` shows
the 🩺 lines on stderr.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.test_oneshot import call
from tests.support.language_servers import require
from tests.support.openai_server import Reply

# A cold server on a busy 2-core machine can take well over the 3 s default to analyse its first
# file; the bound itself is tested with a server that never answers (tests/unit/test_lsp_manager.py).
SLOW_MACHINE = {"PAICLI_LSP_WAIT_SECONDS": "60"}
CALC = "def add(a: int, b: int) -> int:\n    return a + b\n\n\ntotal: int = add(1, 2)\n"


def lsp_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user" and "[LSP 诊断]" in m["content"]]


def ledger_events(home) -> list[dict]:
    [path] = (home / "history" / "raw").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_edit_that_breaks_a_file_brings_its_new_errors_to_the_next_request(run_paicli, server, project, paicli_home):
    require("python")
    (project / "calc.py").write_text(CALC)
    server.script = [
        Reply("", tool_calls=[call("edit_file", {"path": "calc.py", "old_text": "add(1, 2)", "new_text": 'add(1, "2")\ndef broken(:\n    pass'})]),
        Reply("", tool_calls=[call("edit_file", {"path": "calc.py", "old_text": 'add(1, "2")\ndef broken(:\n    pass', "new_text": "add(1, 2)"})]),
        Reply("修好了"),
    ]
    done = run_paicli("-p", "改一下 calc.py", "--yes", "--verbose", env=SLOW_MACHINE, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second, third = server.requests
    assert lsp_messages(first) == []
    [told] = lsp_messages(second)
    assert "calc.py（basedpyright）" in told
    assert "错误 5:" in told and "reportArgumentType" in told  # the type error, with its line
    assert "错误 6:" in told and "was not closed" in told  # the syntax error
    assert 'trust="untrusted-data"' in told
    assert lsp_messages(third) == [told]  # the fix adds nothing: the old message stays, nothing new
    assert "🩺 calc.py: 新增" in done.stderr and "已消除" in done.stderr
    sources = [e["source"] for e in ledger_events(paicli_home) if e["event"] == "user"]
    assert sources.count("lsp_diagnostics") == 1


def test_typescript_errors_of_an_edit_reach_the_model_with_file_and_line(run_paicli, server, project):
    require("typescript")
    (project / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}')
    (project / "app.ts").write_text("export const n: number = 1;\n")
    server.script = [
        Reply("", tool_calls=[call("write_file", {"path": "app.ts", "content": 'export const n: number = "x";\nfunction f( {\n'})]),
        Reply("好了"),
    ]
    done = run_paicli("-p", "改 app.ts", "--yes", "--verbose", env=SLOW_MACHINE, timeout=120)
    assert done.returncode == 0, done.stderr
    [told] = lsp_messages(server.requests[1])
    assert "app.ts（typescript-language-server）" in told
    assert "错误 1:14" in told and "not assignable to type 'number'" in told  # the type error
    assert "错误 2:" in told and "expected" in told  # the syntax error
    assert "🩺 app.ts: 新增" in done.stderr


def test_without_verbose_the_diagnostics_reach_the_model_but_not_stderr(run_paicli, server, project):
    require("python")
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "bad.py", "content": "x: int = 'a'\n"})]),
                     Reply("好了")]
    done = run_paicli("-p", "写 bad.py", "--yes", env=SLOW_MACHINE, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(lsp_messages(server.requests[1])) == 1
    assert "🩺" not in done.stderr


def test_a_missing_server_leaves_the_edit_done_and_says_so_once(run_paicli, server, project):
    server.script = [Reply("", tool_calls=[call("write_file", {"path": "a.go", "content": "package main\n"})]),
                     Reply("", tool_calls=[call("write_file", {"path": "b.go", "content": "package main\n"})]),
                     Reply("好了")]
    done = run_paicli("-p", "写 go", "--yes", "--verbose", env={"PAICLI_LSP_GO": "/nonexistent/gopls"})
    assert done.returncode == 0, done.stderr
    assert (project / "a.go").exists() and (project / "b.go").exists()
    assert done.stderr.count("🩺") == 1 and "PAICLI_LSP_GO 指定的 /nonexistent/gopls 不存在或不可执行" in done.stderr
    assert all(not lsp_messages(r) for r in server.requests)


def test_lsp_command_lists_each_language_and_its_state(run_paicli):
    done = run_paicli("-p", "/lsp", env={"PAICLI_LSP_GO": "off", "PAICLI_LSP_RUST": "/nonexistent/ra"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("🩺 语言服务器（等待诊断最多 3 秒")
    go = next(line for line in lines if line.strip().startswith("Go "))
    assert "未安装：PAICLI_LSP_GO=off" in go
    assert "PAICLI_LSP_RUST 指定的 /nonexistent/ra 不存在或不可执行" in next(l for l in lines if "Rust" in l)


def test_lsp_command_with_lsp_off_says_so(run_paicli):
    done = run_paicli("-p", "/lsp", env={"PAICLI_LSP": "off"})
    assert done.returncode == 0 and done.stdout.strip() == "🩺 语言服务器已关闭（PAICLI_LSP=off）"


def test_lsp_command_refuses_an_unknown_language(run_paicli):
    done = run_paicli("-p", "/lsp restart cobol")
    assert done.returncode == 1 and "未知的语言: cobol" in done.stderr
