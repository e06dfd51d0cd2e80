import asyncio
from pathlib import Path

import pytest
from blockbuster import blockbuster_ctx

from paicli.tools.base import PolicyError, ToolContext
from paicli.tools.builtin.shell import MAX_COMMAND_OUTPUT_CHARS, execute_command, limit_output
from tests.support.waiting import until


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve(), command_timeout=1)


def is_alive(pid: int) -> bool:
    """A zombie counts as dead: in a container nobody may reap an orphan."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_dead(pid: int) -> bool:
    try:
        return bool(await until(lambda: not is_alive(pid), 5, f"process {pid} ending"))
    except AssertionError:
        return False


async def wait_for_file(path: Path) -> str:
    def written() -> str:
        return path.read_text().strip() if path.exists() else ""

    return str(await until(written, 5, f"{path} written"))


async def test_execute_command_merges_stderr_into_output(ctx):
    result = await execute_command({"command": "echo out; echo err >&2; printf tail"}, ctx)
    assert result == "命令执行完成 (exit code: 0)\nout\nerr\ntail\n"


async def test_execute_command_reports_nonzero_exit_code(ctx):
    assert await execute_command({"command": "echo bad; exit 3"}, ctx) == "命令执行完成 (exit code: 3)\nbad\n"


async def test_execute_command_runs_in_project_root(ctx):
    assert await execute_command({"command": "pwd"}, ctx) == f"命令执行完成 (exit code: 0)\n{ctx.root}\n"


async def test_execute_command_empty_command_is_refused_as_text(ctx):
    assert await execute_command({"command": "   "}, ctx) == "执行命令失败: 命令不能为空"
    assert await execute_command({}, ctx) == "执行命令失败: 命令不能为空"


async def test_execute_command_checks_command_guard_first(ctx):
    with pytest.raises(PolicyError) as info:
        await execute_command({"command": "sudo touch marker"}, ctx)
    assert info.value.reason == "禁止 sudo 提权"
    assert not (ctx.root / "marker").exists()


async def test_execute_command_timeout_kills_the_process_group(ctx):
    command = "sleep 30 & echo $! > child.pid; sleep 30"
    result = await execute_command({"command": command}, ctx)
    assert result == "命令执行超时（1秒），已强制终止"
    assert await wait_dead(int((ctx.root / "child.pid").read_text()))


async def test_execute_command_cancellation_kills_the_child(ctx):
    ctx = ctx.__class__(root=ctx.root, command_timeout=60)  # cancelled, not timed out, however busy the machine
    task = asyncio.create_task(execute_command({"command": "sleep 30 & echo $! > child.pid; wait"}, ctx))
    pid = int(await wait_for_file(ctx.root / "child.pid"))
    assert is_alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_dead(pid)


async def test_execute_command_does_not_wait_forever_on_a_background_child_holding_the_pipe(ctx):
    result = await execute_command({"command": "echo started; sleep 30 &"}, ctx.__class__(root=ctx.root, command_timeout=10))
    assert result == "命令执行完成 (exit code: 0)\nstarted\n(命令已结束，但输出读取超时)\n"


async def test_execute_command_truncates_long_output(ctx):
    result = await execute_command({"command": "seq 1 5000"}, ctx)
    assert result.startswith("命令执行完成 (exit code: 0)\n1\n2\n")
    assert result.endswith("\n...(输出已截断)")
    assert len(result) < MAX_COMMAND_OUTPUT_CHARS + 100


async def test_execute_command_never_blocks_the_event_loop(ctx):
    with blockbuster_ctx(["paicli.tools"]):
        result = await execute_command({"command": "echo hi"}, ctx)
    assert result == "命令执行完成 (exit code: 0)\nhi\n"


async def test_execute_command_reads_the_script_it_runs_without_blocking_the_event_loop(ctx):
    (ctx.root / "ok.sh").write_text("echo fine\n")
    (ctx.root / "bad.sh").write_text("echo ran > ran.txt\nsudo true\n")
    with blockbuster_ctx(["paicli.tools"]):
        result = await execute_command({"command": "bash ok.sh"}, ctx)
        with pytest.raises(PolicyError, match="脚本 bad.sh 第 2 行: sudo true"):
            await execute_command({"command": "sh bad.sh"}, ctx)
    assert result == "命令执行完成 (exit code: 0)\nfine\n"
    assert not (ctx.root / "ran.txt").exists()


def test_limit_output_cuts_back_to_a_newline():
    text = ("x" * 99 + "\n") * 100  # 10 000 chars
    limited = limit_output(text)
    assert limited == ("x" * 99 + "\n") * 79 + "x" * 99 + "\n...(输出已截断)"
    assert limit_output("short\n") == "short\n"


async def test_an_offloaded_outputs_preview_counts_the_commands_lines_and_names_the_file(tmp_path):
    """Issue 41: 400,000 lines are more than the capture keeps; the preview's count is the
    command's own, its last lines are the command's last, and it says what was saved where."""
    from paicli.memory.context.offload import ToolResultOffloader
    from paicli.ui.previews import command_preview

    root = tmp_path.resolve()
    ctx = ToolContext(root=root, offloader=ToolResultOffloader(root, "s1"))
    result = await execute_command({"command": "seq 400000"}, ctx)
    printed = result.artifact["output"]
    assert (printed["lines"], printed["chars"], printed["kept"]) == (400000, 2_688_895, 2_000_000)
    assert "命令共输出 2688895 字符、400000 行" in result  # the model is told too
    head, *last = command_preview(str(result), result.artifact)
    assert head == ("    ⎿ exit code 0 · 输出 400000 行，前 399995 行未显示"
                    f"（前 2000000 字符已保存到 {printed['file']}，其余未保存）")
    assert last == [f"    │ {n}" for n in range(399996, 400001)]
    assert (root / printed["file"]).stat().st_size > 2_000_000 - 1
    small = await execute_command({"command": "seq 3000"}, ctx)
    assert command_preview(str(small), small.artifact)[0] == (
        f"    ⎿ exit code 0 · 输出 3000 行，前 2995 行未显示（完整输出已保存到 {small.artifact['output']['file']}）")


async def test_a_cancel_before_the_output_is_read_still_kills_the_whole_group(ctx):
    """A network command's start (slirp4netns joining, ``Launch.started``) can take a while on a
    busy machine; a Ctrl-C then once left the command's children running after bash was gone."""
    import time as clock

    from paicli.tools.sandbox.command import Launch

    class SlowStart(Launch):
        def started(self) -> None:
            clock.sleep(1.5)

    class Sandbox:
        def launch(self, command, root, env, **_):
            return SlowStart(["bash", "-c", command], "sandboxed")

    slow = ctx.__class__(root=ctx.root, command_timeout=60, sandbox=Sandbox())
    task = asyncio.create_task(execute_command({"command": "sleep 30 & echo $! > child.pid; wait"}, slow))
    pid = int(await wait_for_file(ctx.root / "child.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_dead(pid)


async def test_a_cancel_while_the_pipes_are_connected_kills_the_whole_group(ctx, monkeypatch):
    """asyncio's spawn, cancelled while it connects the pipes, kills bash alone: what bash had
    already started ran on. The spawn is held here until the command has started its child."""
    real = asyncio.create_subprocess_exec
    root = ctx.root

    async def slow_to_connect(*args, **kwargs):
        proc = await real(*args, **kwargs)
        await until(lambda: (root / "child.pid").exists() and (root / "child.pid").read_text().strip(), 10)
        await asyncio.sleep(0.5)  # the window in which the cancel lands
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_to_connect)
    slow = ctx.__class__(root=root, command_timeout=60)
    task = asyncio.create_task(execute_command({"command": "sleep 30 & echo $! > child.pid; wait"}, slow))
    pid = int(await wait_for_file(root / "child.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_dead(pid)
