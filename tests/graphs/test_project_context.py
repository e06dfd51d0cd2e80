"""The turn's ``## Project Context``: PAI.md and relevant long-term memory, last in the system
prompt, stable for the whole turn so only new messages change between requests."""

from __future__ import annotations

from datetime import UTC, datetime

from langgraph.checkpoint.memory import InMemorySaver

from graphs.react import build_graph
from memory.longterm.manager import LongTermMemory, MemoryOptions
from memory.longterm.entry import normalize_project_key
from memory.longterm.store import MemoryStore
from nodes.support.state import Deps
from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

FIXED = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def _harness(model, project, memory, *, through_store: bool) -> Harness:
    deps = {"clock": lambda: FIXED, "prompt_home": project.parent / "home"}
    harness = Harness(model, project, **deps, memory=None if through_store else memory)
    if through_store:  # the CLI and `langgraph dev` hand the memory in as the graph's store
        harness.graph = build_graph(Deps(model=model, **deps), checkpointer=InMemorySaver(), store=MemoryStore(memory))
    return harness


def _memory(tmp_path, project) -> LongTermMemory:
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    key = normalize_project_key(project)
    memory.save_fact("项目使用 Java 17 和 Maven 构建", scope="project", project_key=key, now=FIXED)
    memory.save_fact("默认用中文回答", scope="global", project_key=key, now=FIXED)
    memory.save_fact("别的项目用 Gradle", scope="project", project_key="/elsewhere", now=FIXED)
    return memory


async def test_requests_differ_only_after_the_stable_prefix_and_in_new_messages(tmp_path, project):
    (project / "PAI.md").write_text("构建命令: mvn -q test", encoding="utf-8")
    (project / "a.txt").write_text("hello", encoding="utf-8")
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "a.txt"})), ai("读完了"),
                               ai("", tool_call("list_dir", {"path": "."})), ai("看完了")])
    harness = _harness(model, project, _memory(tmp_path, project), through_store=True)
    await harness.turn("Java 版本是多少？读一下 a.txt")
    await harness.turn("Maven 构建怎么跑？列一下目录")
    systems = [seen[0].content for seen in model.seen]
    assert systems[0] == systems[1] and systems[2] == systems[3]  # one prompt per turn
    stable = systems[0][:systems[0].index("## Project Context")]
    assert all(s.startswith(stable) for s in systems)  # the cacheable prefix never moves
    for earlier, later in zip(model.seen, model.seen[1:]):
        assert later[1:len(earlier)] == earlier[1:]  # the conversation only grows
    context = systems[0][len(stable):]
    assert context.index("## PAI.md 项目记忆") < context.index("## 相关长期记忆")
    assert "构建命令: mvn -q test" in context and "项目使用 Java 17 和 Maven 构建" in context
    assert "别的项目用 Gradle" not in context  # another project's memory is not visible


async def test_deps_memory_works_without_a_store_and_nothing_relevant_leaves_no_block(tmp_path, project):
    model = ScriptedChatModel([ai("好的")])
    harness = _harness(model, project, _memory(tmp_path, project), through_store=False)
    await harness.turn("zzzz qqqq")
    system = model.seen[0][0].content
    assert "## 相关长期记忆" not in system and "## Project Context" not in system


async def test_memory_block_respects_the_profile_budget(tmp_path, project):
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    key = normalize_project_key(project)
    for i in range(40):
        memory.save_fact(f"Java 构建规则第 {i} 条：" + "很长的说明" * 20 + f" 编号{i}x", scope="project",
                         project_key=key, now=FIXED, allow_conflict=True)
    model = ScriptedChatModel([ai("好的")])
    harness = _harness(model, project, memory, through_store=False)
    await harness.turn("Java 构建规则")
    block = model.seen[0][0].content.split("## 相关长期记忆", 1)[1]
    lines = [line for line in block.splitlines() if line.startswith("- [FACT]")]
    assert 0 < len(lines) < 10  # 640 tokens at 128K (reference p.4) stops before the top 10
