"""`paicli` run inside the test's own interpreter: `paicli.__main__.main(argv)` with the
environment, working directory, argv and standard streams a child process would have had, and
the exit status it would have ended with.

A fresh interpreter costs about 3.7 s of LangGraph/langchain/openai imports for a turn that
takes a fraction of a second; in process those imports are paid once per test session. What a
child process gets for free is put back by hand around each run, and what paicli changes in
the process is undone afterwards, so one run cannot leak into the next:

- ``os.environ`` is replaced by the child's environment for the run and restored whole
  afterwards (that also undoes anything paicli set in it);
- the working directory, ``sys.argv`` and ``sys.stdin``/``stdout``/``stderr``;
- every signal handler, the root logger (``--debug`` calls ``logging.basicConfig``) and the
  warnings machinery (``run_guarded`` installs its ``showwarning``);
- threads paicli started: a process waits for its non-daemon threads at exit and drops its daemon
  ones; in process a daemon thread would live on into the next test, so the run waits for every
  thread it started and fails if one is still running after THREAD_GRACE seconds (a thread
  blocked for good is a leak in a long-lived process too, e.g. the Studio server).

Process-wide caches stay warm between runs, as they would in a long REPL session: the prompt
files (``paicli.prompts.stable_prefix``, per prompt directory), the sandbox probe, the ``rg`` lookup,
jieba's dictionary, the command guard's ``PROCESS_STARTED``. A test that depends on one being
fresh (it rewrites a prompt file between two runs, or checks what a first load writes) needs the
``process`` marker.

What still needs a real process (kill -9, SIGPIPE, a pty, Ctrl-C, Studio, several processes on
one lock) is marked ``@pytest.mark.process`` and keeps the subprocess runner.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

THREAD_GRACE = 10.0  # seconds the threads a run started get to end after it


class CapturedStream(io.TextIOWrapper):
    """A pipe-like text stream: UTF-8, not a terminal, no file descriptor."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline=None,
                         write_through=True)

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("in-process capture has no file descriptor")

    def text(self) -> str:
        """Decoded as ``subprocess.run(..., text=True, encoding="utf-8")`` decodes a pipe."""
        self.flush()
        return io.TextIOWrapper(io.BytesIO(self.buffer.getvalue()), encoding="utf-8").read()


@contextmanager
def _process_state(env: Mapping[str, str], cwd: Path, argv: list[str],
                   stdin: IO[str], stdout: CapturedStream, stderr: CapturedStream) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv = sys.argv
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_signals = {s: signal.getsignal(s) for s in signal.valid_signals()
                     if s not in (signal.SIGKILL, signal.SIGSTOP)}
    root = logging.getLogger()
    saved_logging = (root.level, list(root.handlers))
    try:
        with warnings.catch_warnings():  # restores filters and showwarning on the way out
            os.environ.clear()
            os.environ.update(env)
            os.chdir(cwd)
            sys.argv = ["paicli", *argv]
            sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)
        for handler in root.handlers[:]:
            if handler not in saved_logging[1]:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(saved_logging[0])


def _exit_status(code: object, stderr: IO[str]) -> int:
    """What the interpreter makes of ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


def _leftover_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads the run started that are still alive once it is over. A collection first: an
    executor nobody holds any more (the ledger's writer) tells its workers to stop when it is
    collected, as interpreter exit would."""
    gc.collect()
    new = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    deadline = time.monotonic() + THREAD_GRACE
    for thread in new:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t for t in new if t.is_alive()]


class _Deadline:
    """A run past its timeout gets SIGINT in the main thread, as Ctrl-C would deliver it (it also
    breaks a blocking system call); the runner then raises ``subprocess.TimeoutExpired`` as
    ``subprocess.run`` does, so one slow test fails and the session goes on."""

    def __init__(self, timeout: float | None) -> None:
        self.fired = threading.Event()
        self._lock = threading.Lock()
        self._over = False
        self._main = threading.main_thread().ident
        self._timer = threading.Timer(timeout, self._expire) if timeout is not None else None
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            if not self._over:
                self.fired.set()
                signal.pthread_kill(self._main, signal.SIGINT)

    def end(self) -> None:
        with self._lock:
            self._over = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        time.sleep(0)  # a SIGINT sent just before is handled here, inside the runner's try


def run_in_process(argv: list[str], *, env: Mapping[str, str], cwd: Path,
                   stdin: int | IO[str] | None = subprocess.DEVNULL,
                   timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m paicli *argv` as a CompletedProcess, run in this interpreter.

    ``stdin`` is ``subprocess.DEVNULL`` (the default, like the subprocess runner) or an open text
    file. ``timeout``: past it the run is interrupted as by Ctrl-C and ``TimeoutExpired`` raised.
    """
    from paicli.__main__ import main  # imported once per test session, which is the point

    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run paicli in process from the main thread (its signal handling needs it)")
    out, err = CapturedStream(), CapturedStream()
    own_stdin = stdin in (None, subprocess.DEVNULL)
    child_stdin = open(os.devnull, encoding="utf-8") if own_stdin else stdin  # noqa: SIM115
    before = set(threading.enumerate())
    deadline = _Deadline(timeout)
    try:
        with _process_state(env, cwd, argv, child_stdin, out, err):
            try:
                try:
                    returncode = main(list(argv))
                except SystemExit as exc:
                    returncode = _exit_status(exc.code, err)
                except BaseException as exc:  # noqa: BLE001 - the interpreter's own last resort
                    if isinstance(exc, KeyboardInterrupt) and not deadline.fired.is_set():
                        raise  # the person running pytest pressed Ctrl-C
                    traceback.print_exc(file=err)
                    returncode = 1
                finally:
                    deadline.end()
            except KeyboardInterrupt:
                if not deadline.fired.is_set():
                    raise
                returncode = 130
            for stream in (out, err):
                stream.flush()
    finally:
        deadline.end()
        if own_stdin:
            child_stdin.close()
    command = ["paicli", *argv]
    if deadline.fired.is_set():
        raise subprocess.TimeoutExpired(command, timeout, output=out.text(), stderr=err.text())
    leftover = _leftover_threads(before)
    if leftover:
        raise AssertionError(f"paicli left threads running after the run: {leftover}")
    return subprocess.CompletedProcess(command, returncode, out.text(), err.text())
