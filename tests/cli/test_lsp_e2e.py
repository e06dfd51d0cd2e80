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
