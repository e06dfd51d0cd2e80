"""``paicli -p TEXT``: one turn, the answer on stdout, progress and errors on stderr.

Exit codes: 0 answered, 1 the model call failed for good or a command failed (a refused
``/save``), 2 a setting the user must fix, 130 cancelled with Ctrl-C. Approval questions are
asked on the terminal when there is one; without one they are rejected (use ``--yes`` in scripts).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from paicli import commands
from paicli.app import App
from paicli.render import Renderer


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
        return 1 if asyncio.run(commands.handle(text, app, print)).failed else 0
    if not text:
        print("paicli: -p needs a non-empty prompt", file=sys.stderr)
        return 2
    app.warm_up()
    return asyncio.run(_turn(app, text))


async def _turn(app: App, text: str) -> int:
    renderer = Renderer(stream_answer=False, read_line=read_stdin_line)
    renderer.waiting()
    result = await app.session.run_turn(text, renderer)
    renderer.finish(result)
    if result.error:
        return 1
    print(result.answer, flush=True)
    await app.finish_background()  # Q7: the answer first, then a bounded wait for extraction
    for notice in app.background_notices():
        print(notice, file=sys.stderr)
    return 0
