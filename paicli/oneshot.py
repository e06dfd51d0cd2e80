"""``paicli -p TEXT``: one turn, the answer on stdout, progress and errors on stderr.

Exit codes: 0 answered; 1 the model call failed for good, the answer came back empty, or a
slash command failed; 2 a setting or an argument the user must fix; 130 cancelled with
Ctrl-C; 141 stdout was closed by its reader (``| head``), as for a process SIGPIPE ends.
Approval questions are asked on the terminal when there is one; without one they are
rejected (use ``--yes`` in scripts). Everything printed goes through ``paicli.terminal``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from paicli import commands
from paicli.app import App
from paicli.render import Renderer
from paicli.terminal import write_line


async def read_stdin_line(prompt: str) -> str | None:
    if not sys.stdin or not sys.stdin.isatty():
        return None
    print(prompt, end="", file=sys.stderr, flush=True)
    try:
        return await asyncio.to_thread(sys.stdin.readline) or None
    except (OSError, ValueError):
        return None


def run_oneshot(args: Any) -> int:
    app = App(args)
    text = args.prompt.strip()
    if commands.is_command(text):
        return _command(text, app)
    if not text:
        print("paicli: -p needs a non-empty prompt", file=sys.stderr)
        return 2
    app.warm_up()
    if getattr(args, "mode", "react") == "team":
        return asyncio.run(_mode_run(app, text, args.mode))
    return asyncio.run(_turn(app, text))


def _command(text: str, app: App) -> int:
    """A slash command: its lines on stdout; why it failed, on stderr with exit 1."""
    out = commands.Output(lambda line: write_line(line, sys.stdout), lambda line: write_line(line, sys.stderr))
    outcome = asyncio.run(commands.handle(text, app, out))
    return 1 if outcome.failed else 0


async def _mode_run(app: App, text: str, mode: str) -> int:
    """A Team run: its progress on stderr, its final text on stdout; 0 only if every step completed."""
    from paicli.mode_run import run_mode

    renderer = Renderer(stream_answer=False, read_line=read_stdin_line)
    result = await run_mode(app.session, mode, text, renderer)
    renderer.stop_waiting()
    if result.outcome.strip():
        write_line(result.outcome, sys.stdout)
    await app.finish_background()
    for notice in app.background_notices():
        write_line(notice, sys.stderr)
    return 0 if result.status == "completed" else 1


async def _turn(app: App, text: str) -> int:
    renderer = Renderer(stream_answer=False, read_line=read_stdin_line)
    renderer.waiting()
    result = await app.session.run_turn(text, renderer)
    renderer.finish(result)  # names the error, or an empty answer, on stderr
    if result.error:
        return 1
    answered = bool(result.answer.strip())
    if answered:
        write_line(result.answer, sys.stdout)
    await app.finish_background()  # Q7: the answer first, then a bounded wait for extraction
    for notice in app.background_notices():
        write_line(notice, sys.stderr)
    return 0 if answered else 1  # an empty answer is an incomplete one
