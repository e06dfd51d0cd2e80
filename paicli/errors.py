"""Errors at the edge: a user-fixable error is one red line and exit 2; a bug is one line
pointing at a log file with the traceback (``--debug`` prints it instead). A reader that
closes stdout early (``paicli -p … | head``) ends the run quietly with 141, the status of a
process SIGPIPE ends, which is what a shell pipeline expects."""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Callable

from paicli.memory.errors import PaicliError
from paicli.ui.terminal import visible

BROKEN_PIPE_EXIT = 128 + 13  # 128 + SIGPIPE
CANCELLED_EXIT = 128 + 2  # 128 + SIGINT: cancelled with Ctrl-C


USER_WARNINGS = ("LedgerWarning", "MemoryWarning")


def _say(text: str) -> None:
    colour, text = sys.stderr.isatty(), visible(text)  # messages may quote hostile values
    print(f"\x1b[31m{text}\x1b[0m" if colour else text, file=sys.stderr)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings meant for the user (a damaged ledger line, an unusable memory file) as one
    line, not a source excerpt. Matched by name so start-up does not import the ledger."""
    if category.__name__ in USER_WARNINGS:
        _say(f"⚠️ {message}")
    else:
        _default_show_warning(message, category, filename, lineno, file, line)


_default_show_warning = warnings.showwarning


CRASH_LOG = "crash.log"  # the latest crash; earlier ones are of no use once it is fixed


def write_crash_log(log_dir: Path, text: str) -> Path:
    """Write ``text`` to ``log_dir/crash.log``, readable by the user alone (a traceback can quote
    settings and file contents): the directory 0700, the file 0600, a symlink refused."""
    log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(log_dir, 0o700)
    path = log_dir / CRASH_LOG
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(fd, 0o600)  # an older file may have been created with a wider mode
        out.write(text)
    return path


def _report_crash(log_dir: Path | None) -> None:
    """One line pointing at the log; if the log cannot be written, the traceback itself."""
    text, where = traceback.format_exc(), None
    if log_dir is not None:
        try:
            where = f"traceback 见 {write_crash_log(log_dir, text)}"
        except OSError as exc:
            _say(f"paicli: 无法在 {log_dir} 写入崩溃日志（{exc}）")
    if where is None:  # nothing lost: the traceback goes to stderr instead
        print(text, file=sys.stderr, end="")
        where = "traceback 见上方"
    _say(f"paicli: 内部错误：{sys.exc_info()[1]!r}（{where}；--debug 直接显示）")


def run_guarded(fn: Callable[[], int], *, debug: bool = False, log_dir: Path | None = None) -> int:
    """``log_dir``: where a crash's traceback goes ($PAICLI_HOME/logs); None prints it."""
    warnings.showwarning = _show_warning
    try:
        return fn()
    except PaicliError as exc:
        _say(f"paicli: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("⏹️ 已取消当前任务。")
        return CANCELLED_EXIT
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_EXIT
    except Exception as exc:
        if debug:
            raise
        from paicli.run.database_errors import failure_line

        if (line := failure_line(exc)) is not None:  # issue 35: the database went away; one line
            _say(line)
            return 1
        _report_crash(log_dir)
        return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
