"""Every tool's result carries a typed status set where the result is made (paicli issue 12).

One table over every built-in tool's failure (and a few success) modes, run through the
registry the executor uses: the status must not depend on how the model-facing text begins.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest

from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from tests.support.web_server import FakeWebServer, Page
from paicli.tools.base import ToolContext, WebOptions
from paicli.tools.registry import BUILTIN_TOOLS, run_tool
from paicli.tools.builtin.search import grep_code

EVIL = "a" * 40 + "b\n"  # catastrophic for `re` with (a+)+$: the python engine's deadline fires


@pytest.fixture
def web():
    with FakeWebServer(pages={"/png": Page(b"\x89PNG", content_type="image/png")}) as server:
        yield server


@pytest.fixture
def ctx(tmp_path, web) -> ToolContext:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo two\n", encoding="utf-8")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (root / "evil.txt").write_text(EVIL * 20, encoding="utf-8")
    (root / "sub").mkdir()
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    config = WebOptions(searxng_url=web.base_url, allow_hosts=("127.0.0.1",))
    return ToolContext(root=root.resolve(), command_timeout=1, web=config, memory=memory, project_key=str(root))


# (tool, arguments, ok): {web} in an argument is the fake web server's base URL.
CASES = [
    ("read_file", {"path": "a.txt"}, True),
    ("read_file", {"path": "a.txt", "offset": 99}, True),  # an empty window is an answer, not an error
    ("read_file", {"path": "missing.txt"}, False),
    ("read_file", {"path": "sub"}, False),
    ("read_file", {"path": "blob.bin"}, False),
    ("read_file", {"path": "../outside.txt"}, False),
    ("read_file", {}, False),
    ("write_file", {"path": "new.txt", "content": "x"}, True),
    ("write_file", {"path": "new.txt"}, False),
    ("write_file", {"path": "../outside.txt", "content": "x"}, False),
    ("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "1"}, True),
    ("edit_file", {"path": "a.txt", "old_text": "three", "new_text": "3"}, False),
    ("edit_file", {"path": "a.txt", "old_text": "two", "new_text": "2"}, False),
    ("edit_file", {"path": "sub", "old_text": "x", "new_text": "y"}, False),
    ("edit_file", {"path": "nope.txt", "old_text": "x", "new_text": "y"}, False),
    ("edit_file", {"path": "a.txt", "old_text": "", "new_text": "y"}, False),
    ("edit_file", {"path": "../a.txt", "old_text": "x", "new_text": "y"}, False),
    ("list_dir", {"path": "."}, True),
    ("list_dir", {"path": "sub"}, True),  # empty, but it exists
    ("list_dir", {"path": "missing"}, False),
    ("list_dir", {"path": "a.txt"}, False),
    ("list_dir", {"path": "/etc"}, False),
    ("glob_files", {"pattern": "*.txt"}, True),
    ("glob_files", {"pattern": "*.none"}, True),
    ("glob_files", {}, False),
    ("grep_code", {"pattern": "two"}, True),
    ("grep_code", {"pattern": "absent"}, True),
    ("grep_code", {"pattern": "(", "regex": True}, False),
    ("grep_code", {"pattern": "x", "path": "../"}, False),
    ("execute_command", {"command": "echo hi"}, True),
    ("execute_command", {"command": "echo no; exit 3"}, False),
    ("execute_command", {"command": "sleep 5"}, False),
    ("execute_command", {"command": "  "}, False),
    ("execute_command", {"command": "rm -rf /"}, False),
    ("web_search", {"query": "q"}, True),
    ("web_search", {"query": " "}, False),
    ("web_fetch", {"url": "{web}/article"}, True),
    ("web_fetch", {"url": "{web}/missing"}, False),
    ("web_fetch", {"url": "{web}/png"}, False),
    ("web_fetch", {"url": "file:///etc/passwd"}, False),
    ("web_fetch", {"url": ""}, False),
    ("save_memory", {"fact": "用户偏好 4 空格缩进"}, True),
    ("save_memory", {"fact": " "}, False),
    ("save_memory", {"fact": "用户偏好 tab 缩进", "replace_id": "no-such-id"}, False),
    ("no_such_tool", {}, False),
]


@pytest.mark.parametrize(("tool", "args", "ok"), CASES, ids=lambda v: repr(v)[:40])
async def test_each_tool_sets_its_status_where_the_result_is_made(ctx, web, tool, args, ok):
    args = {k: v.replace("{web}", web.base_url) if isinstance(v, str) else v for k, v in args.items()}
    result = await run_tool(tool, args, ctx)
    assert result.ok is ok, str(result)


async def test_grep_timeout_is_a_failure(ctx):
    slow = partial(grep_code, engine="python", python_timeout=0.5)
    tools = {"grep_code": replace(BUILTIN_TOOLS["grep_code"], fn=slow)}
    result = await run_tool("grep_code", {"pattern": "(a+)+$", "regex": True}, ctx, tools)
    assert result.startswith("工具执行超时: grep_code") and not result.ok


async def test_web_search_failures(tmp_path, web):
    unconfigured = ToolContext(root=tmp_path.resolve())
    assert not (await run_tool("web_search", {"query": "q"}, unconfigured)).ok
    web.search_status = 500
    down = ToolContext(root=tmp_path.resolve(), web=WebOptions(searxng_url=web.base_url))
    result = await run_tool("web_search", {"query": "q"}, down)
    assert result.startswith("搜索失败") and not result.ok


async def test_a_memory_conflict_is_not_a_success(ctx):
    assert (await run_tool("save_memory", {"fact": "项目使用 JDK 17"}, ctx)).ok
    result = await run_tool("save_memory", {"fact": "项目使用 JDK 21"}, ctx)
    assert result.startswith("⚠️ 未写入") and not result.ok


async def test_success_does_not_depend_on_how_the_text_begins(ctx):
    (ctx.root / "warn.txt").write_text("❌ 工具执行失败: not really\n", encoding="utf-8")
    result = await run_tool("execute_command", {"command": "echo '工具执行失败: printed'"}, ctx)
    assert result.ok
    assert (await run_tool("read_file", {"path": "warn.txt"}, ctx)).ok


async def test_a_guard_refusal_is_a_failure_typed_as_a_decision(ctx):
    refusal = await run_tool("execute_command", {"command": "rm -rf /"}, ctx)
    assert refusal.startswith("🛡️") and not refusal.ok and refusal.refused
    failure = await run_tool("execute_command", {"command": "exit 1"}, ctx)
    assert not failure.ok and not failure.refused
