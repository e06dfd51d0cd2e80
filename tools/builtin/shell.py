"""execute_command: one `bash -c` in the project root (reference t, d.5, s.7).

The command gets its own process group so a timeout or a Ctrl-C kills everything it
started, not just bash. Everything here awaits; nothing blocks the event loop. It runs in the
command sandbox (``paicli.tools.sandbox``, issue 24) that ``ctx.sandbox`` describes; the result's
artifact says how it ran (``sandbox``: sandboxed, network or outside) for the audit log, and what
it printed (``output``: its own line and character counts, however much was kept, the file the
whole output went to, its last lines) for the preview under the call (issue 41).
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
from typing import Any

from paicli.tools.base import PolicyError, ToolContext, ToolText, failed
from paicli.tools.common import str_arg
from paicli.tools.policy.guards import CommandGuard
from paicli.tools.sandbox.command import NETWORK_FAILED, Launch
from paicli.tools.sandbox.flags import command_flags

MAX_COMMAND_OUTPUT_CHARS = 8_000  # reference (d.5): what the model sees without offloading
MAX_COMMAND_CAPTURE_CHARS = 2_000_000  # reference (d.5): what is kept for the offloader
READ_CHUNK_BYTES = 64 * 1024
TAIL_CHARS, TAIL_LINES = 4096, 5  # the last lines the preview shows, of everything printed
OUTPUT_DRAIN_SECONDS = 2.0  # reference (d.5): the 2 s wait after the process is done
EXIT_POLL_SECONDS = 0.05  # only while a background child holds the pipe after bash exits


async def execute_command(args: dict[str, Any], ctx: ToolContext) -> str:
    command = str_arg(args, "command") or ""
    if not command.strip():
        return failed("执行命令失败: 命令不能为空")
    await asyncio.to_thread(CommandGuard.check, command, ctx.root)  # it reads the scripts the command runs
    env = ctx.command_env()
    launch = await asyncio.to_thread(_launch, command, args, ctx, env)  # the sandbox layout stats files
    proc = await _spawn(launch, ctx, env)
    reader: asyncio.Task | None = None
    try:  # from here on a cancel (Ctrl-C) kills the command's whole group, however early it comes
        try:  # a network command's namespace joins the internet before the command starts (issue 34)
            await asyncio.to_thread(launch.started)
        except OSError as exc:
            await _kill(proc, None)
            await asyncio.to_thread(launch.finish, "", False)
            return failed(NETWORK_FAILED.format(why=exc))
        capture = _Capture(ctx.offloader.capture_limit if ctx.offloader else MAX_COMMAND_CAPTURE_CHARS)
        reader = asyncio.create_task(capture.read_all(proc.stdout))
        text, ok, saved = await _finish(proc, reader, capture, ctx)
    except asyncio.CancelledError:
        await _kill(proc, reader)
        launch.finish("")  # Ctrl-C: still remove protected paths it created
        raise
    notes = await asyncio.to_thread(launch.finish, capture.text(), ok)
    if notes:
        text = text + ("" if text.endswith("\n") else "\n") + notes
    return ToolText(text, {"sandbox": launch.how, "output": capture.summary(saved)}, ok=ok)


async def _spawn(launch: Launch, ctx: ToolContext, env: dict[str, str]) -> asyncio.subprocess.Process:
    """The command's process, in a process group of its own. Shielded: a cancel while asyncio
    connects the pipes would have it kill bash alone and leave what bash already started running;
    the spawn finishes and the cancel kills the whole group."""
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *launch.argv, cwd=str(ctx.root), env=launch.env if launch.env is not None else env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True, pass_fds=launch.fds, preexec_fn=launch.preexec,
    ))
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        try:
            proc = await spawn
        except BaseException:
            launch.close()
            raise
        await _kill(proc, None)
        launch.finish("")
        raise
    except BaseException:
        launch.close()
        raise


def _launch(command: str, args: dict[str, Any], ctx: ToolContext, env: dict[str, str]) -> Launch:
    flags = command_flags(args)  # the approval gate asked a person about both flags
    if ctx.sandbox is None:
        return Launch(["bash", "-c", command], "outside")
    try:
        return ctx.sandbox.launch(command, ctx.root, env, network=flags.network, outside=flags.outside,
                                  session=ctx.session_id)
    except RuntimeError as exc:  # PAICLI_COMMAND_SANDBOX=required and no sandbox
        raise PolicyError(str(exc)) from None


async def _finish(proc: asyncio.subprocess.Process, reader: asyncio.Task, capture: _Capture,
                  ctx: ToolContext) -> tuple[str, bool, str | None]:
    """The result text, whether it succeeded, and the file its whole output went to (if any)."""
    timeout = ctx.command_timeout
    try:
        await asyncio.wait_for(_exited(proc, reader), timeout)
    except TimeoutError:
        await _kill(proc, reader)
        return f"命令执行超时（{timeout:g}秒），已强制终止", False, None
    note = ""
    try:
        # A background child can keep the pipe open after bash exits; do not wait on it forever.
        await asyncio.wait_for(asyncio.shield(reader), OUTPUT_DRAIN_SECONDS)
    except TimeoutError:
        await _kill(proc, reader)
        note = "(命令已结束，但输出读取超时)\n"
    code = _exit_code(proc.returncode)
    shown, saved = await _shown(capture.text(), ctx)
    # reference (d.5): reads like a success, but a non-zero exit is a failure
    return f"命令执行完成 (exit code: {code})\n{shown}{note}", code == 0, saved


async def _shown(output: str, ctx: ToolContext) -> tuple[str, str | None]:
    """reference (d.5): long output goes to an offload file (head and tail stay in context);
    without an offloader it is cut. The offloader writes files, so it runs in a thread."""
    if ctx.offloader is None:
        return limit_output(output), None
    return await asyncio.to_thread(ctx.offloader.offloaded_command_output, output)


async def _exited(proc: asyncio.subprocess.Process, reader: asyncio.Task) -> None:
    """Returns once bash has exited.

    ``proc.wait()`` alone also waits for the pipe to close, which a background child
    (``server &``) can hold open forever; so watch the return code while the reader runs.
    """
    while proc.returncode is None:
        if reader.done():  # EOF: normally bash is exiting right now
            await proc.wait()
            return
        await asyncio.wait([reader], timeout=EXIT_POLL_SECONDS)


def _exit_code(returncode: int | None) -> int:
    # A negative code means "killed by signal"; report it the way a shell would (128 + n).
    if returncode is None:
        return -1
    return 128 - returncode if returncode < 0 else returncode


async def _kill(proc: asyncio.subprocess.Process, reader: asyncio.Task | None) -> None:
    """SIGKILL the whole process group, then let the pipe close and reap bash.

    Waiting for the reader's EOF (not just the exit code) lets asyncio close the
    transport; otherwise it is left open and complains once the loop is gone. Without a
    reader yet (killed before its output was read), the pipe closes with the process.
    """
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # pgid == pid thanks to start_new_session
    except (ProcessLookupError, PermissionError):
        pass
    try:
        if reader is not None:
            await asyncio.wait_for(asyncio.shield(reader), OUTPUT_DRAIN_SECONDS)
    except TimeoutError:
        reader.cancel()  # a daemon that left our process group still holds the pipe
    try:
        await asyncio.wait_for(proc.wait(), OUTPUT_DRAIN_SECONDS)
    except TimeoutError:
        pass


def limit_output(text: str) -> str:
    """What the model sees of a long output when no offloader is configured."""
    if len(text) <= MAX_COMMAND_OUTPUT_CHARS:
        return text
    head = text[:MAX_COMMAND_OUTPUT_CHARS]
    cut = head.rfind("\n")
    if cut > MAX_COMMAND_OUTPUT_CHARS // 2:  # same rule as the offloader's head preview
        head = head[:cut]
    return head + "\n...(输出已截断)"


class _Capture:
    """Merged stdout+stderr, decoded incrementally, kept up to the capture limit; the line and
    character counts and the last lines are of everything the command printed (issue 41)."""

    def __init__(self, limit: int = MAX_COMMAND_CAPTURE_CHARS) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._size = 0
        self.overflow = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.chars, self._breaks, self._tail = 0, 0, ""

    async def read_all(self, stream: asyncio.StreamReader | None) -> None:
        assert stream is not None
        while chunk := await stream.read(READ_CHUNK_BYTES):
            self._keep(self._decoder.decode(chunk))  # keep draining past the limit so the child never blocks
        self._keep(self._decoder.decode(b"", final=True))

    def _keep(self, piece: str) -> None:
        self.chars += len(piece)
        self._breaks += piece.count("\n") + piece.count("\r") - piece.count("\r\n")
        self._tail = (self._tail + piece)[-TAIL_CHARS:]
        room = self.limit - self._size
        if len(piece) > room:
            piece, self.overflow = piece[:room], True
        self._parts.append(piece)
        self._size += len(piece)

    def text(self) -> str:
        # reference (d.5): output is read line by line, each line followed by "\n".
        text = "".join(self._parts).replace("\r\n", "\n").replace("\r", "\n")
        if text and not text.endswith("\n"):
            text += "\n"
        if self.overflow:
            text += f"...(超过 {self.limit} 字符的部分未保存；命令共输出 {self.chars} 字符、{self.lines()} 行)\n"
        return text

    def lines(self) -> int:
        """The command's own line count (an unterminated last line counts)."""
        return self._breaks + (1 if self._tail and not self._tail.endswith(("\n", "\r")) else 0)

    def summary(self, saved: str | None) -> dict[str, Any]:
        tail = self._tail.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
        return {"lines": self.lines(), "chars": self.chars, "kept": self._size if self.overflow else None,
                "file": saved, "tail": tail[-TAIL_LINES:] if self.chars else []}
