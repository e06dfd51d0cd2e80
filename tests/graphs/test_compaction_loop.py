"""Compaction inside the react graph: the tiers fire before model calls, the overflow retry,
offloading; every request the agent makes keeps tool calls paired."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx
import openai
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.context.rounds import internal, internal_kind
from paicli.memory.context.summary import HEADINGS
from paicli.memory.longterm.entry import normalize_project_key
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from tests.graphs.conftest import Harness, assert_paired
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

SUMMARY = "\n".join(f"{h}\n- 第 {i} 节" for i, h in enumerate(HEADINGS))


def overflow() -> openai.BadRequestError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    body = {"code": "context_length_exceeded", "message": "maximum context length is 16000 tokens"}
    return openai.BadRequestError("Error code: 400", response=httpx.Response(400, request=request), body=body)


def rounds(n: int, size: int) -> list:
    history = []
    for i in range(n):
        history += [HumanMessage(f"第 {i} 轮需求 " + "x" * size), AIMessage(f"第 {i} 轮回答 " + "y" * size)]
    return history


async def test_old_tool_results_are_cleared_with_a_notice(project):
    for i in range(5):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + "z" * 6000)
    script = [ai("", tool_call("read_file", {"path": f"f{i}.txt"})) for i in range(5)] + [ai("读完了")]
    h = Harness(ScriptedChatModel(script), project, window=16_000)
    await h.turn("把五个文件都读一遍")
    assert any(n.startswith("🧹 上下文增长，已清理") for n in h.notices)
    last_prompt = h.model.seen[-1]
    assert "[已清理的旧工具结果]" in last_prompt[2].content or any(
        "[已清理的旧工具结果]" in str(m.content) for m in last_prompt if isinstance(m, ToolMessage))
    assert sum("z" * 6000 in str(m.content) for m in last_prompt) == 3  # reference (e): keep the 3 most recent
    h.check_prompts()
    state = await h.graph.aget_state(h.config)
    assert state.values["compaction"]["source"] == "automatic:tool_result_clearing"


async def test_long_history_is_summarised_before_the_call(project):
    model = ScriptedChatModel([ai(SUMMARY), ai("继续工作")])
    h = Harness(model, project, window=16_000)
    await h.graph.aupdate_state(h.config, {"messages": rounds(6, 4000)}, as_node="prepare_turn")
    await h.turn("下一步做什么？")
    summary_request, answer_request = model.seen
    assert model.seen_tools[0] == [] or not model.seen_tools[0]
    assert "📦 上下文接近窗口上限，已通过完整对话摘要压缩后继续。" in h.notices
    assert HEADINGS[0] in answer_request[1].content and answer_request[-1].content == "下一步做什么？"
    messages = (await h.graph.aget_state(h.config)).values["messages"]
    assert len(messages) < 14 and messages[-1].content == "继续工作"
    model.assert_consumed()


async def test_the_compact_node_is_skipped_over_the_threshold_when_no_tier_would_fire(project):
    """Over the clearing trigger (6,000 of a 16,000 window) with no old result left to clear and
    under the summary trigger, compacting would change nothing: no compact step, no checkpoint."""
    (project / "a.txt").write_text("short\n")
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "a.txt"})),
                               ai("", tool_call("read_file", {"path": "./a.txt"})), ai("读完了")])
    h = Harness(model, project, window=16_000)
    await h.graph.aupdate_state(h.config, {"messages": rounds(2, 4000)}, as_node="prepare_turn")
    await h.turn("读一下 a.txt")
    steps = [state.next async for state in h.graph.aget_state_history(h.config)]
    assert steps.count(("call_model",)) == 3 and not any("compact" in step for step in steps)
    assert not h.notices and "compaction" not in (await h.graph.aget_state(h.config)).values
    model.assert_consumed()


async def test_context_overflow_forces_compaction_and_retries_once(project):
    model = ScriptedChatModel([overflow(), ai(SUMMARY), ai("重试成功")])
    h = Harness(model, project)
    await h.graph.aupdate_state(h.config, {"messages": rounds(5, 1500)}, as_node="prepare_turn")
    await h.turn("继续")
    assert len(model.seen) == 3
    retry = model.seen[2]
    assert HEADINGS[0] in retry[1].content and len(retry) < len(model.seen[0])
    state = (await h.graph.aget_state(h.config)).values
    assert state["messages"][-1].content == "重试成功" and not state.get("error")
    assert state["compaction"]["source"] == "automatic:full_summary"
    model.assert_consumed()


async def test_second_overflow_reports_and_keeps_the_history(project):
    model = ScriptedChatModel([overflow(), ai(SUMMARY), overflow()])
    h = Harness(model, project)
    await h.graph.aupdate_state(h.config, {"messages": rounds(5, 1500)}, as_node="prepare_turn")
    await h.turn("继续")
    state = (await h.graph.aget_state(h.config)).values
    assert state["error"].startswith("❌ 调用 LLM 失败: ")
    assert len(state["messages"]) == 11 and state["messages"][0].content.startswith("第 0 轮需求")
    assert_paired(state["messages"])


async def test_huge_tool_output_is_offloaded_and_read_back_in_ranges(project):
    (project / "big.log").write_text("".join(f"line {i}\n" for i in range(8000)))
    output_file = ".paicli/tool-outputs/s1/001-read_file.txt"
    model = ScriptedChatModel(
        [
            ai("", tool_call("read_file", {"path": "big.log"})),
            ai("", tool_call("read_file", {"path": output_file, "offset": 4000, "limit": 5})),
            ai("找到了"),
        ]
    )
    h = Harness(model, project)
    await h.turn("看看日志")
    preview = model.seen[1][-1].content
    assert output_file in preview and len(preview) < 8000 and "line 0" in preview and "line 7999" in preview
    assert (project / output_file).read_text().endswith("line 7999\n")
    ranged = model.seen[2][-1].content
    assert "line 3998" in ranged and output_file not in ranged.split("\n", 2)[1]
    assert (project / ".paicli/tool-outputs/.gitignore").exists()


def memory_note(block: str) -> HumanMessage:
    """A turn's memory message as load_context writes it (memory/context/turn_memory.py)."""
    return internal(block.strip(), "memory_context", id=str(uuid.uuid4()))


async def test_a_summary_drops_old_memory_messages_keeps_recent_ones_and_brings_back_what_the_turn_needs(tmp_path, project):
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    key, now = normalize_project_key(project), datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
    memory.save_fact("项目使用 Java 17", scope="project", project_key=key, now=now)
    java = memory_note(memory.context_block("Java", 640, key, now))
    history = []
    for i, (user, answer) in enumerate(zip(*[iter(rounds(6, 4000))] * 2)):
        note = java if i == 0 else memory_note(f"## 相关长期记忆\n\n- [FACT] 线索 {i}")
        history += [user, note, answer]
    model = ScriptedChatModel([ai(SUMMARY), ai("Java 17")])
    h = Harness(model, project, window=16_000, memory=memory, clock=lambda: now)
    await h.graph.aupdate_state(h.config, {"messages": history}, as_node="prepare_turn")
    await h.turn("Java 版本是多少？")
    summary_request, answer_request = model.seen
    summarised = "\n".join(str(m.content) for m in summary_request)
    assert "项目使用 Java 17" not in summarised and "线索 1" not in summarised  # clues are not summarised
    kept = [m.content for m in answer_request if internal_kind(m) == "memory_context"]
    assert kept[:-1] == [f"## 相关长期记忆\n\n- [FACT] 线索 {i}" for i in (4, 5)]  # kept with their rounds (3 with this one)
    assert "项目使用 Java 17" in kept[-1] and answer_request[-2].content == "Java 版本是多少？"
    for i, message in enumerate(answer_request):  # each kept memory message follows its user message
        if internal_kind(message) == "memory_context" and i < len(answer_request) - 1:
            assert isinstance(answer_request[i - 1], HumanMessage) and internal_kind(answer_request[i - 1]) is None
    h.check_prompts()
    model.assert_consumed()
