"""The session's language servers with real processes (issue 38): a small pygls server of our
own (``tests/support/fake_lsp.py``) that publishes known diagnostics, crashes, or never answers,
run inside the command sandbox as paicli runs every server."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from tests.support.language_servers import sandbox_in
from paicli.tools.lsp.manager import LanguageServers
from paicli.tools.lsp.options import LspOptions
from paicli.tools.lsp.report import model_text

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_lsp.py")
SLOW_MACHINE = 60.0  # a fake server importing pygls on a loaded 2-core machine takes seconds


def servers(project: Path, mode: str, *args: str, **options) -> LanguageServers:
    """Servers of ``mode`` for ``project``, the sandbox's data beside it."""
    command = {"python": (sys.executable, FAKE, mode, *args)}
    return LanguageServers(LspOptions(commands=command, **{"wait": SLOW_MACHINE, **options}), sandbox_in(project.parent))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\nERROR one\nWARN two\n")
    return root.resolve()


def files(project: Path, *names: str) -> list[tuple[str, str]]:
    return [(name, str(project / name)) for name in names]


async def test_new_problems_are_told_once_and_fixed_ones_are_counted(project):
    lsp = servers(project, "ok")
    try:
        first = await lsp.diagnose(str(project), files(project, "app.py"), {})
        [report] = first.reports
        assert [(p.severity, p.line, p.column, p.source) for p in report.new] == [(1, 2, 1, "fake"), (2, 3, 1, "fake")]
        (project / "app.py").write_text("x = 1\nWARN two\nERROR three\n")
        second = await lsp.diagnose(str(project), files(project, "app.py"), {"app.py": report.current})
        [again] = second.reports
        assert [p.message for p in again.new] == ["error here: ERROR three"]  # the warning moved a line: not new
        assert again.fixed == 1
        assert "error here: ERROR three" in model_text(second.reports, 20)
    finally:
        await lsp.close()


async def test_a_server_that_never_answers_holds_an_edit_for_the_bound_only(project):
    lsp = servers(project, "mute", wait=1.0)
    try:
        started = time.monotonic()
        found = await lsp.diagnose(str(project), files(project, "app.py"), {})
        assert time.monotonic() - started < 10  # the bound, not the 20 s start-up allowance
        assert found.reports == [] and found.late == ["app.py"]
        assert found.lines == ["🩺 app.py: python 1 秒内没有给出诊断，先继续"]
    finally:
        await lsp.close()


async def test_a_server_that_crashes_on_start_is_named_once_with_its_reason_and_not_restarted(project):
    lsp = servers(project, "crash")
    try:
        first = await lsp.diagnose(str(project), files(project, "app.py"), {})
        assert len(first.lines) == 1 and "进程意外退出（状态 3）：fake-lsp: cannot start: no toolchain" in first.lines[0]
        [row] = [r for r in lsp.status() if r.key == "python"]
        assert row.state == "failed" and "no toolchain" in row.reason
        pid = row.pid
        second = await lsp.diagnose(str(project), files(project, "app.py"), {})
        assert second.lines == [] and second.reports == []  # not restarted, not named again
        assert [r.pid for r in lsp.status() if r.key == "python"] == [pid]
        assert await lsp.restart("python") == 1  # a person may try again
        third = await lsp.diagnose(str(project), files(project, "app.py"), {})
        assert len(third.lines) == 1  # a new start, a new failure, named once more
    finally:
        await lsp.close()


async def test_a_server_that_dies_at_the_first_document_leaves_the_edit_alone(project):
    lsp = servers(project, "die-after-open")
    try:
        found = await lsp.diagnose(str(project), files(project, "app.py"), {})
        assert found.reports == [] and len(found.lines) == 1 and "状态 4" in found.lines[0]
    finally:
        await lsp.close()


async def test_a_missing_server_is_said_once_and_then_costs_no_step(project):
    lsp = LanguageServers(LspOptions(commands={"python": ("/nonexistent/pyls",)}), sandbox_in(project.parent))
    first = await lsp.diagnose(str(project), files(project, "app.py"), {})
    assert first.lines == ["🩺 PAICLI_LSP_PYTHON 指定的 /nonexistent/pyls 不存在或不可执行，跳过 Python 诊断"]
    assert not lsp.serves(str(project / "app.py"))  # the router skips the diagnostics node from now on
    assert (await lsp.diagnose(str(project), files(project, "app.py"), {})).lines == []


async def test_late_diagnostics_are_had_on_the_next_try(project):
    lsp = servers(project, "slow", "3", wait=0.5)
    try:
        assert await lsp.servers_ready(str(project / "app.py"), str(project), SLOW_MACHINE)
        first = await lsp.diagnose(str(project), files(project, "app.py"), {})
        assert first.late == ["app.py"]
        later = await lsp.diagnose(str(project), files(project, "app.py"), {}, timeout=SLOW_MACHINE)
        assert [p.line for p in later.reports[0].new] == [2, 3]
    finally:
        await lsp.close()


async def test_an_idle_server_is_stopped_and_started_again_when_needed(project):
    lsp = servers(project, "ok", idle=0.5)
    try:
        assert (await lsp.diagnose(str(project), files(project, "app.py"), {})).reports
        for _ in range(100):
            if not lsp.servers:
                break
            await asyncio.sleep(0.1)
        assert not lsp.servers  # stopped after idling
        assert (await lsp.diagnose(str(project), files(project, "app.py"), {})).reports
    finally:
        await lsp.close()


async def test_a_language_turned_off_gets_no_server(project):
    lsp = servers(project, "ok")
    try:
        assert (await lsp.diagnose(str(project), files(project, "app.py"), {})).reports
        assert await lsp.turn_off("python") == 1
        assert not lsp.serves(str(project / "app.py"))
        assert [r.state for r in lsp.status() if r.key == "python"] == ["off"]
    finally:
        await lsp.close()


async def test_files_of_other_languages_or_outside_any_are_not_diagnosed(project):
    (project / "notes.txt").write_text("ERROR\n")
    lsp = servers(project, "ok")
    assert not lsp.serves(str(project / "notes.txt"))
    assert await lsp.diagnose(str(project), files(project, "notes.txt"), {}) == type(
        await lsp.diagnose(str(project), [], {}))()


def test_a_new_event_loop_gets_new_servers_and_the_old_ones_are_killed(project):
    """A host that runs each graph run on an event loop of its own (Studio's isolated loops)."""
    import os

    lsp = servers(project, "ok")
    first = asyncio.run(lsp.diagnose(str(project), files(project, "app.py"), {}))
    [old] = [s.pid for s in lsp.servers.values()]

    async def again():
        try:
            return await lsp.diagnose(str(project), files(project, "app.py"), {})
        finally:
            await lsp.close()

    second = asyncio.run(again())
    assert first.reports and second.reports
    for _ in range(100):
        try:
            os.kill(old, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the first loop's server is still running")


def test_a_language_with_no_server_shows_the_programs_looked_for(project):
    """/lsp's table names what to install in the server column, not the language twice."""
    lsp = LanguageServers(LspOptions(), sandbox_in(project.parent), path=str(project))  # a PATH with nothing
    go = next(r for r in lsp.status() if r.key == "go")
    assert (go.state, go.server, go.reason) == ("missing", "gopls", "")
    configured = LanguageServers(LspOptions(commands={"python": ("/nonexistent/pyls",)}), sandbox_in(project.parent))
    python = next(r for r in configured.status() if r.key == "python")
    assert (python.state, python.server) == ("missing", "")
    assert python.reason == "PAICLI_LSP_PYTHON 指定的 /nonexistent/pyls 不存在或不可执行"
