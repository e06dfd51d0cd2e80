import asyncio
import threading

import pytest

from paicli.tools.base import PolicyError, ToolContext, ToolSpec, failed
from paicli.tools.registry import BUILTIN_TOOLS, MAX_PARALLEL_TOOLS, run_batch, run_tool, schemas


@pytest.fixture
def ctx(tmp_path) -> ToolContext:
    return ToolContext(root=tmp_path.resolve(), command_timeout=5)


def spec(name, fn, *, parallel_safe=False, is_async=True) -> ToolSpec:
    return ToolSpec(name, name, {"type": "object", "properties": {}, "required": []}, fn, is_async=is_async, parallel_safe=parallel_safe)


def test_builtin_tools_with_parallel_safe_readers():
    assert sorted(BUILTIN_TOOLS) == ["create_project", "edit_file", "execute_command", "glob_files", "grep_code",
                                     "list_dir", "read_file",
                                     "save_memory", "web_fetch", "web_search", "write_file"]
    assert {n for n, s in BUILTIN_TOOLS.items() if s.parallel_safe} == {
        "read_file", "list_dir", "glob_files", "grep_code", "web_search", "web_fetch"}  # reference s.8


def test_schemas_are_sorted_by_name_and_declare_required_parameters():
    result = schemas(BUILTIN_TOOLS)
    names = [s["function"]["name"] for s in result]
    assert names == sorted(names)
    read = next(s["function"] for s in result if s["function"]["name"] == "read_file")
    assert read["parameters"]["required"] == ["path"]
    assert read["parameters"]["properties"]["offset"] == {"type": "integer", "description": "起始行号，1 表示第一行；省略时读取全文"}
    assert read["parameters"]["properties"]["limit"]["description"] == "最多读取多少行；省略时读取全文，最大 2000 行"
    grep = next(s["function"] for s in result if s["function"]["name"] == "grep_code")
    assert set(grep["parameters"]["properties"]) == {"pattern", "path", "glob", "regex", "case_sensitive", "context_lines", "max_results", "head_limit", "max_chars"}


async def test_run_tool_unknown_tool(ctx):
    assert await run_tool("nope", {}, ctx) == "未知工具: nope"


async def test_run_tool_maps_policy_error_to_refusal_text(ctx):
    result = await run_tool("read_file", {"path": "../../etc/passwd"}, ctx)
    assert result == f"🛡️ 策略拒绝: 路径越界: ../../etc/passwd 不在项目根 {ctx.root} 之内"
    assert await run_tool("execute_command", {"command": "sudo ls"}, ctx) == "🛡️ 策略拒绝: 禁止 sudo 提权"


async def test_run_tool_maps_other_exceptions_to_failure_text(ctx):
    def boom(args, ctx):
        raise RuntimeError("boom")

    async def bare(args, ctx):
        raise KeyError

    tools = {"boom": spec("boom", boom, is_async=False), "bare": spec("bare", bare)}
    assert await run_tool("boom", {}, ctx, tools) == "工具执行失败: boom"
    assert await run_tool("bare", {}, ctx, tools) == "工具执行失败: KeyError"


async def test_run_tool_runs_sync_tools_off_the_event_loop_thread(ctx):
    def where(args, ctx):
        return "worker" if threading.current_thread() is not threading.main_thread() else "main"

    assert await run_tool("where", None, ctx, {"where": spec("where", where, is_async=False)}) == "worker"


async def test_run_tool_lets_cancellation_through(ctx):
    started = asyncio.Event()

    async def hang(args, ctx):
        started.set()
        await asyncio.sleep(60)

    task = asyncio.create_task(run_tool("hang", {}, ctx, {"hang": spec("hang", hang)}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_run_tool_accepts_stringified_arguments(ctx):
    (ctx.root / "a.txt").write_text("x\ny\n")
    result = await run_tool("read_file", {"path": "a.txt", "offset": "2", "limit": "1"}, ctx)
    assert result == "文件内容: a.txt (lines 2-2 of 2)\n    2 | y\n"


def meeting_tools(parallel_safe: bool):
    """Two calls of `meet` return "met" only if both are running at the same time."""
    present = {"count": 0}
    everyone = asyncio.Event()

    async def meet(args, ctx):
        present["count"] += 1
        if present["count"] == 2:
            everyone.set()
        try:
            await asyncio.wait_for(everyone.wait(), 0.5)
        except TimeoutError:
            return "alone"
        finally:
            present["count"] -= 1
        return "met"

    return {"meet": spec("meet", meet, parallel_safe=parallel_safe)}


async def test_run_batch_runs_consecutive_parallel_safe_calls_concurrently(ctx):
    assert await run_batch([("meet", {}), ("meet", {})], ctx, meeting_tools(True)) == ["met", "met"]


async def test_run_batch_runs_unsafe_calls_one_at_a_time(ctx):
    assert await run_batch([("meet", {}), ("meet", {})], ctx, meeting_tools(False)) == ["alone", "alone"]


async def test_run_batch_returns_results_in_call_order(ctx):
    second_done = asyncio.Event()

    async def first(args, ctx):
        await second_done.wait()  # finishes last
        return "first"

    async def second(args, ctx):
        second_done.set()
        return "second"

    tools = {"first": spec("first", first, parallel_safe=True), "second": spec("second", second, parallel_safe=True)}
    assert await asyncio.wait_for(run_batch([("first", {}), ("second", {}), ("x", {})], ctx, tools), 5) == ["first", "second", "未知工具: x"]


async def test_run_batch_runs_unsafe_call_alone_between_safe_runs(ctx):
    events = []

    async def record(args, ctx):
        events.append(f"start {args['id']}")
        await asyncio.sleep(0)
        events.append(f"end {args['id']}")
        return args["id"]

    tools = {"read": spec("read", record, parallel_safe=True), "write": spec("write", record)}
    calls = [("read", {"id": "r1"}), ("read", {"id": "r2"}), ("write", {"id": "w"}), ("read", {"id": "r3"})]
    assert await run_batch(calls, ctx, tools) == ["r1", "r2", "w", "r3"]
    assert events[:2] == ["start r1", "start r2"]  # the two reads overlap
    assert events[4:] == ["start w", "end w", "start r3", "end r3"]


async def test_run_batch_runs_at_most_four_calls_at_once(ctx):
    state = {"active": 0, "peak": 0}
    release = asyncio.Event()

    async def hold(args, ctx):
        state["active"] += 1
        state["peak"] = max(state["peak"], state["active"])
        await release.wait()
        state["active"] -= 1
        return str(args["i"])

    tools = {"hold": spec("hold", hold, parallel_safe=True)}
    batch = asyncio.create_task(run_batch([("hold", {"i": i}) for i in range(6)], ctx, tools))
    for _ in range(20):
        await asyncio.sleep(0)
    assert state["active"] == MAX_PARALLEL_TOOLS
    release.set()
    assert await batch == ["0", "1", "2", "3", "4", "5"]
    assert state["peak"] == MAX_PARALLEL_TOOLS


async def test_run_batch_with_real_tools(ctx):
    (ctx.root / "a.txt").write_text("hello\n")
    calls = [("read_file", {"path": "a.txt"}), ("list_dir", {"path": "."}), ("execute_command", {"command": "echo hi"})]
    assert await run_batch(calls, ctx) == ["文件内容:\nhello\n", "目录内容:\n[F] a.txt", "命令执行完成 (exit code: 0)\nhi\n"]


async def test_run_tool_types_every_result(ctx):
    """A returned string is a success, ``failed()``, a PolicyError or an error a failure."""
    def policy(args, ctx):
        raise PolicyError("no")

    tools = {"ok": spec("ok", lambda a, c: "❌ looks like a failure", is_async=False),
             "no": spec("no", lambda a, c: failed("fine?"), is_async=False),
             "policy": spec("policy", policy, is_async=False), "boom": spec("boom", lambda a, c: 1 / 0, is_async=False)}
    results = [await run_tool(name, {}, ctx, tools) for name in ("ok", "no", "policy", "boom", "missing")]
    assert [(str(r), r.ok) for r in results] == [
        ("❌ looks like a failure", True), ("fine?", False), ("🛡️ 策略拒绝: no", False),
        ("工具执行失败: division by zero", False), ("未知工具: missing", False)]
