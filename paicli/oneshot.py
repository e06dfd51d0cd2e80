"""``paicli -p TEXT``: one turn, the answer on stdout, progress and errors on stderr.

Exit codes: 0 answered; 1 the model call failed for good, the answer came back empty, a
slash command failed, a Plan/Team run did not complete, or an approval could not be asked;
2 a setting or an argument the user must fix; 130 cancelled with Ctrl-C; 141 stdout was closed
by its reader (``| head``), as for a process SIGPIPE ends. Approval questions are asked on the
terminal when there is one; without one they are refused, each refusal named on stderr, and a
closing line counts them (use ``--yes`` in scripts). stdout carries only the answer or a run's
summary; a run that failed (a plan the model did not write as one) says why on stderr.
Everything printed goes through ``paicli.ui.terminal``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from paicli.app import App, sandbox_warning
from paicli.commands import dispatch as commands
from paicli.errors import CANCELLED_EXIT
from paicli.modes import MODE_SPECS, NOT_COMPLETED, STOPPED, ModeSpec
from paicli.run.result import RunResult
from paicli.ui.render import REFUSED_CLOSING, Renderer
from paicli.ui.terminal import read_stdin_line, write_line


def run_oneshot(args: Any) -> int:
    app = App(args)
    try:
        text = args.prompt.strip()
        if commands.is_command(text):
            return _command(text, app)
        if not text:
            print("paicli: -p 需要非空的任务文本", file=sys.stderr)
            return 2
        app.warm_up()  # the imports start first: the sandbox probe's subprocess runs meanwhile
        _warn_unsandboxed(app)
        from paicli.config.model_switch import window_notice

        note = window_notice(app.settings)  # issue 39: an unknown model's window, said once (the REPL: in its banner)
        if note is not None and getattr(args, "verbose", False):
            write_line(note, sys.stderr)
        if line := app.new_session_line():  # issue 41: --session naming no session starts one
            write_line(line, sys.stderr)
        return asyncio.run(_run(app, args.mode, text))
    finally:
        app.close()


PIPED_EMPTY = "paicli: 标准输入没有内容；运行一轮请用 echo \"任务\" | paicli 或 paicli -p \"任务\"，交互使用请在终端中启动 paicli"
PIPED_COMMANDS = ("paicli: 标准输入以斜杠命令开头且有多行；每次只运行一条命令或一个任务："
                  "paicli -p \"/命令\"，或在终端中启动 paicli 逐条输入")


def run_piped(args: Any) -> int:
    """stdin is no terminal (``echo task | paicli``, ``paicli < task.txt``): its whole text is the
    ``-p`` text, with ``-p``'s output and exit codes (issue 41); no REPL is drawn into a pipe.
    Nothing to read, or several lines starting with a slash command (a script of commands is not
    one task), is refused with one line, exit 2."""
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace") if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if not text.strip():
        print(PIPED_EMPTY, file=sys.stderr)
        return 2
    if commands.is_command(text.strip().splitlines()[0]) and len(text.strip().splitlines()) > 1:
        print(PIPED_COMMANDS, file=sys.stderr)
        return 2
    args.prompt = text
    return run_oneshot(args)


def run_continue(args: Any) -> int:
    """``--continue`` (``--session ID``, else the project's newest session): finish the
    session's run that was cut short (Q11)."""
    app = App(args)
    try:
        _warn_unsandboxed(app)
        app.continue_session()
        app.warm_up()
        return asyncio.run(_continue(app))
    finally:
        app.close()


def _warn_unsandboxed(app: App) -> None:
    """issue 24: one ⚠️ line per run when its commands will not be sandboxed, and why."""
    if warning := sandbox_warning(app.settings):
        write_line(warning, sys.stderr)


async def _continue(app: App) -> int:
    mode = await app.session.unfinished_mode()
    if mode is None:
        write_line(f"会话 {app.session_id} 没有未完成的运行。", sys.stderr)
        return 0
    return await _run(app, mode, None)


def renderer(app: App) -> Renderer:
    """Progress on stderr; approvals asked only when stdin is a terminal, refused otherwise;
    commands' output, edits' diffs and the model's reasoning (issue 39) only with ``--verbose``."""
    interactive = bool(sys.stdin) and sys.stdin.isatty()
    verbose = bool(getattr(app.args, "verbose", False))
    return Renderer(stream_answer=False, read_line=read_stdin_line, interactive=interactive, previews=verbose,
                    thinking=app.settings.show_thinking if verbose else "off", tools=app.tool_table(),
                    show_answer=lambda answer: write_line(answer, sys.stdout))


def refused(renderer: Renderer, app: App) -> bool:
    """The closing line when approvals were refused for want of a terminal."""
    if renderer.refused:
        write_line(REFUSED_CLOSING.format(n=len(renderer.refused), sid=app.session_id), sys.stderr)
    return bool(renderer.refused)


async def _run(app: App, mode: str, text: str | None) -> int:
    """The one entry point for a run in any mode (``paicli.modes``; text None: finish the
    session's unfinished run): progress on stderr, the answer or the run's summary on stdout."""
    spec = MODE_SPECS[mode]
    app.start_mcp(lambda line: write_line(line, sys.stderr))
    shown = renderer(app)
    if spec.banner:
        shown.notice(spec.banner)
    if not spec.runs_apart:
        shown.waiting()
    try:
        result = await app.session.run(mode, text, shown, review=False)
    except (KeyboardInterrupt, asyncio.CancelledError):
        shown.stop_waiting()  # no spinner frame after the cancel line
        if not spec.runs_apart:  # a ReAct turn just ends: run_guarded says so (exit 130)
            raise
        # a run apart says how to finish it, and nothing more (not the ReAct turn's words too)
        shown.notice(spec.cancelled, style="yellow")
        shown.notice(STOPPED.format(sid=app.session_id), style="yellow")
        return CANCELLED_EXIT
    finally:
        await app.close_mcp()
        await app.close_lsp()
    return await _close(app, spec, shown, result)


async def _close(app: App, spec: ModeSpec, shown: Renderer, result: RunResult) -> int:
    """A run's end in any mode: its closing lines (``Renderer.finish``: why it failed on stderr,
    else the answer or the run's summary on stdout; the token line on stderr); 0 only when it
    completed with an answer and no approval was refused."""
    shown.finish(result)
    if result.completed:
        await app.finish_background()  # Q7: the answer first, then a bounded wait for extraction
        for notice in app.background_notices():
            write_line(notice, sys.stderr)
    if refused(shown, app):
        return 1
    if not result.completed and spec.runs_apart:  # a run apart is still there to go back to
        write_line(NOT_COMPLETED.format(sid=app.session_id), sys.stderr)
    return 0 if result.completed and result.answer.strip() else 1  # an empty answer is an incomplete one


def _command(text: str, app: App) -> int:
    """A slash command: its lines on stdout; why it failed, on stderr with exit 1. ``/plan <task>``
    and ``/continue`` go on to the run they start."""
    out = commands.Output(lambda line: write_line(line, sys.stdout), lambda line: write_line(line, sys.stderr))
    return asyncio.run(_run_command(text, app, out))


async def _run_command(text: str, app: App, out: commands.Output) -> int:
    try:
        outcome = await commands.handle(text, app, out)
        if outcome.run is not None:
            return await _run(app, *outcome.run)
        return 1 if outcome.failed else 0
    finally:
        await app.close_mcp()
        await app.close_lsp()
