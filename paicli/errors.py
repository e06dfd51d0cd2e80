"""Errors at the edge: a user-fixable error is one red line and exit 2; a bug is one line
pointing at a log file with the traceback (``--debug`` prints it instead). A reader that
closes stdout early (``paicli -p … | head``) ends the run quietly with 141, the status of a
process SIGPIPE ends, which is what a shell pipeline expects."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Callable

from memory.errors import PaicliError
from paicli.terminal import visible

BROKEN_PIPE_EXIT = 128 + 13  # 128 + SIGPIPE


def _say(text: str) -> None:
    colour, text = sys.stderr.isatty(), visible(text)  # messages may quote hostile values
    print(f"\x1b[31m{text}\x1b[0m" if colour else text, file=sys.stderr)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings meant for the user (a damaged ledger line) as one line, not a source excerpt.
    Matched by name so start-up does not import the ledger."""
    if category.__name__ == "LedgerWarning":
        _say(f"⚠️ {message}")
    else:
        _default_show_warning(message, category, filename, lineno, file, line)


_default_show_warning = warnings.showwarning


def run_guarded(fn: Callable[[], int], *, debug: bool = False) -> int:
    warnings.showwarning = _show_warning
    try:
        return fn()
    except PaicliError as exc:
        _say(f"paicli: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("⏹️ 已取消当前任务。")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_EXIT
    except Exception:
        if debug:
            raise
        log = Path(tempfile.gettempdir()) / "paicli-crash.log"
        log.write_text(traceback.format_exc(), encoding="utf-8")
        _say(f"paicli: internal error: {sys.exc_info()[1]!r} (traceback in {log}; --debug shows it)")
        return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
