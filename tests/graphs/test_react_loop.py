"""The react graph with the scripted model: what the model saw and what state was saved."""

from __future__ import annotations

import asyncio

import openai
import httpx
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tests.graphs.conftest import Harness, assert_paired
from tests.support.waiting import until
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call


async def test_multi_step_tool_use_reads_then_edits_a_real_file(project):
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = ScriptedChatModel(
        [
            ai("看看文件", tool_call("read_file", {"path": "calc.py"})),
            ai("", tool_call("edit_file", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})),
            ai("已修复"),
        ]
    )
    h = Harness(model, project)
    assert await h.turn("修复 add") == []
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    model.assert_consumed()
    h.check_prompts()
    second = model.seen[1]
    assert isinstance(second[0], SystemMessage) and "## Language" in second[0].content
    assert "return a - b" in second[-1].content
    assert second[-1].content.startswith('<tool_result tool="read_file" trust="untrusted-data">')
    assert [m.type for m in await h.messages()] == ["human", "ai", "tool", "ai", "tool", "ai"]


async def test_tools_are_exposed_sorted_by_name(project):
    model = ScriptedChatModel([ai("hi")])
    await Harness(model, project).turn("hello")
    names = [t["function"]["name"] for t in model.seen_tools[0]]
    assert names == sorted(names) and "execute_command" in names and "read_file" in names


async def test_parallel_calls_answer_in_call_order(project):
    (project / "a.txt").write_text("AAA")
    (project / "b.txt").write_text("BBB")
    model = ScriptedChatModel(
        [ai("", tool_call("read_file", {"path": "b.txt"}, id="c1"), tool_call("read_file", {"path": "a.txt"}, id="c2")), ai("ok")]
    )
    h = Harness(model, project)
    await h.turn("read both")
    results = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert [r.tool_call_id for r in results] == ["c1", "c2"]
    assert "BBB" in results[0].content and "AAA" in results[1].content


async def test_failing_tool_becomes_an_error_result_and_the_loop_goes_on(project):
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "missing.txt"})), ai("文件不存在")])
    h = Harness(model, project)
    await h.turn("read missing")
    result = model.seen[1][-1]
    assert result.status == "error" and "读取文件失败" in result.content
    assert (await h.messages())[-1].content == "文件不存在"


async def test_unknown_tool_and_path_escape_are_reported_to_the_model(project):
    model = ScriptedChatModel(
        [ai("", tool_call("no_such_tool", {}), tool_call("read_file", {"path": "../outside.txt"})), ai("done")]
    )
    await Harness(model, project).turn("x")
    unknown, escape = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert "[TOOL_NOT_ADVERTISED]" in unknown.content  # reference o.5 rule 10: the policy answers first
    assert "🛡️ 策略拒绝: 路径越界" in escape.content


async def test_malformed_tool_arguments_get_an_error_result(project):
    bad = {"name": "read_file", "args": '{"path": a.txt}', "id": "bad1", "error": None, "type": "invalid_tool_call"}
    model = ScriptedChatModel([AIMessage(content="", invalid_tool_calls=[bad]), ai("换个写法")])
    h = Harness(model, project)
    await h.turn("x")
    result = model.seen[1][-1]
    assert result.tool_call_id == "bad1" and "参数不是合法的 JSON" in result.content
    h.check_prompts()


async def test_command_asks_for_approval_then_runs_when_approved(project):
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "echo made > out.txt"})), ai("done")])
    h = Harness(model, project, approval="auto")
    [question] = await h.turn("make a file")
    assert question.value["tool"] == "execute_command" and question.value["danger"] == "🔴 高危"
    assert not (project / "out.txt").exists()
    assert await h.resume({"decision": "approve"}) == []
    assert (project / "out.txt").read_text() == "made\n"
    assert "命令执行完成 (exit code: 0)" in model.seen[1][-1].content


async def test_rejected_command_does_not_run_and_the_model_hears_why(project):
    model = ScriptedChatModel([ai("", tool_call("execute_command", {"command": "touch out.txt"})), ai("好的，不执行")])
    h = Harness(model, project, approval="auto")
    await h.turn("make a file")
    await h.resume({"decision": "reject", "reason": "不要动磁盘"})
    assert not (project / "out.txt").exists()
    assert "[HITL] 操作已被拒绝：不要动磁盘" in model.seen[1][-1].content


async def test_approve_all_is_remembered_for_the_rest_of_the_session(project):
    model = ScriptedChatModel(
        [
            ai("", tool_call("execute_command", {"command": "echo 1"})),
            ai("", tool_call("execute_command", {"command": "echo 2"})),
            ai("done"),
            ai("", tool_call("execute_command", {"command": "echo 3"})),
            ai("again"),
        ]
    )
    h = Harness(model, project, approval="auto")
    assert len(await h.turn("one")) == 1
    assert await h.resume("a") == []
    assert await h.turn("two") == []  # next turn: still approved
    model.assert_consumed()


async def test_ask_mode_asks_before_writing_and_yes_mode_never_asks(project):
    script = [ai("", tool_call("write_file", {"path": "n.txt", "content": "x"})), ai("ok")]
    asked = Harness(ScriptedChatModel(list(script)), project, approval="ask")
    assert len(await asked.turn("write")) == 1
    auto = Harness(ScriptedChatModel(list(script)), project, approval="auto")
    assert await auto.turn("write") == []
    assert (project / "n.txt").read_text() == "x"


async def test_cancelled_turn_leaves_a_conversation_the_provider_accepts(project):
    model = ScriptedChatModel(
        [ai("", tool_call("execute_command", {"command": "touch started.txt; sleep 30; touch late.txt"})),
         ai("下一轮的回答")]
    )
    h = Harness(model, project)
    task = asyncio.ensure_future(h.turn("slow"))
    await until(lambda: (project / "started.txt").exists(), 30, "the command's start")  # it runs: cancel it now
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await h.turn("继续")
    h.check_prompts()
    assert "用户取消了此次工具调用" in "".join(str(m.content) for m in model.seen[1])
    assert not (project / "late.txt").exists()


async def test_provider_failure_ends_the_turn_and_keeps_the_history(project):
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    boom = openai.APIStatusError("down", response=httpx.Response(500, request=request), body={"message": "server exploded"})
    model = ScriptedChatModel([ai("", tool_call("list_dir", {"path": "."})), boom])
    h = Harness(model, project)
    await h.turn("x")
    state = await h.graph.aget_state(h.config)
    assert state.values["error"].startswith("❌ 调用 LLM 失败: HTTP 500: server exploded")
    assert [m.type for m in state.values["messages"]] == ["human", "ai", "tool"]
    assert_paired(state.values["messages"])


async def test_the_loop_runs_standalone_on_its_own_messages(project):
    """The unit Plan tasks and Team steps run: the same loop, compiled on its own."""
    from langgraph.checkpoint.memory import InMemorySaver

    from paicli.graphs.loop import build_agent_loop
    from paicli.nodes.core.state import Deps, RunContext

    (project / "task.txt").write_text("only the task")
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "task.txt"})), ai("任务完成")])
    unit = build_agent_loop(Deps(model=model)).compile(checkpointer=InMemorySaver())
    out = await unit.ainvoke({"messages": [HumanMessage("做这个任务")]}, {"configurable": {"thread_id": "task-1"}},
                             context=RunContext(project_root=str(project), approval="yes"))
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]
    assert "only the task" in model.seen[1][-1].content
    model.assert_consumed()
