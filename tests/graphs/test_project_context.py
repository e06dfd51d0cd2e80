"""Cache-stable requests (issue 13): PAI.md in the system prompt's ``## Project Context``, each
turn's relevant long-term memories in an internal message of that turn, so every request starts
with the request before it."""

from __future__ import annotations

from datetime import UTC, datetime

from langgraph.checkpoint.memory import InMemorySaver

from paicli.graphs.react import build_graph
from paicli.memory.context.rounds import internal_kind
from paicli.memory.longterm.manager import LongTermMemory, MemoryOptions
from paicli.memory.longterm.entry import normalize_project_key
from paicli.memory.longterm.store import MemoryStore
from paicli.nodes.core.state import Deps
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


def _turn_memories(prompt) -> list[str]:
    return [m.content for m in prompt if internal_kind(m) == "memory_context"]


async def test_every_request_starts_with_the_previous_one_and_carries_its_turns_memories(tmp_path, project):
    (project / "PAI.md").write_text("构建命令: mvn -q test", encoding="utf-8")
    (project / "a.txt").write_text("hello", encoding="utf-8")
    memory = _memory(tmp_path, project)
    key = normalize_project_key(project)
    memory.save_fact("数据库是 PostgreSQL 15", scope="project", project_key=key, now=FIXED)
    memory.save_fact("部署用 Kubernetes 集群", scope="project", project_key=key, now=FIXED)
    model = ScriptedChatModel([ai("", tool_call("read_file", {"path": "a.txt"})), ai("读完了"),
                               ai("", tool_call("list_dir", {"path": "."})), ai("看完了"),
                               ai("PostgreSQL"), ai("Kubernetes")])
    harness = _harness(model, project, memory, through_store=True)
    for question in ("Java 版本是多少？读一下 a.txt", "Maven 构建怎么跑？列一下目录", "数据库用的是什么 PostgreSQL？",
                     "部署到哪个 Kubernetes 集群？"):
        await harness.turn(question)
    model.assert_consumed()
    for earlier, later in zip(model.seen, model.seen[1:]):  # within and across turns
        assert later[:len(earlier)] == earlier
    system = model.seen[0][0].content
    assert "构建命令: mvn -q test" in system and "## 相关长期记忆" not in system
    firsts = [model.seen[i] for i in (0, 2, 4, 5)]  # the first request of each turn
    assert "项目使用 Java 17 和 Maven 构建" in _turn_memories(firsts[0])[-1]
    assert "数据库是 PostgreSQL 15" in _turn_memories(firsts[2])[-1]
    assert "部署用 Kubernetes 集群" in _turn_memories(firsts[3])[-1]
    assert all("别的项目用 Gradle" not in text for text in _turn_memories(firsts[3]))
    # The block keeps the reference's words, and sits right after the question it answers.
    last = firsts[3]
    assert last[-1].content.startswith("## 相关长期记忆\n\n以下记忆是线索而不是事实")
    assert last[-2].content == "部署到哪个 Kubernetes 集群？"
    harness.check_prompts()


async def test_a_memory_already_in_the_conversation_is_not_injected_again(tmp_path, project):
    model = ScriptedChatModel([ai("17"), ai("还是 17")])
    harness = _harness(model, project, _memory(tmp_path, project), through_store=False)
    await harness.turn("Java 版本是多少？")
    await harness.turn("再说一次 Java 版本是多少？")
    blocks = _turn_memories(model.seen[1])
    assert len(blocks) == 1 and "项目使用 Java 17 和 Maven 构建" in blocks[0]


async def test_a_pai_md_change_changes_only_the_system_prompt(tmp_path, project):
    (project / "PAI.md").write_text("构建命令: mvn -q test", encoding="utf-8")
    model = ScriptedChatModel([ai("好的"), ai("好的")])
    harness = _harness(model, project, _memory(tmp_path, project), through_store=False)
    await harness.turn("Java 版本？")
    (project / "PAI.md").write_text("构建命令: ./gradlew test", encoding="utf-8")
    await harness.turn("怎么构建？")
    first, second = model.seen
    assert "./gradlew test" in second[0].content and "mvn -q test" not in second[0].content
    assert second[1:len(first)] == first[1:]  # the conversation is untouched


async def test_deps_memory_works_without_a_store_and_nothing_relevant_leaves_no_block(tmp_path, project):
    model = ScriptedChatModel([ai("好的")])
    harness = _harness(model, project, _memory(tmp_path, project), through_store=False)
    await harness.turn("zzzz qqqq")
    system = model.seen[0][0].content
    assert "## 相关长期记忆" not in system and "## Project Context" not in system
    assert _turn_memories(model.seen[0]) == []


async def test_memory_block_respects_the_profile_budget(tmp_path, project):
    memory = LongTermMemory(tmp_path / "mem", MemoryOptions(sync=False))
    key = normalize_project_key(project)
    for i in range(40):
        memory.save_fact(f"Java 构建规则第 {i} 条：" + "很长的说明" * 20 + f" 编号{i}x", scope="project",
                         project_key=key, now=FIXED, allow_conflict=True)
    model = ScriptedChatModel([ai("好的")])
    harness = _harness(model, project, memory, through_store=False)
    await harness.turn("Java 构建规则")
    block = _turn_memories(model.seen[0])[0]
    lines = [line for line in block.splitlines() if line.startswith("- [FACT]")]
    assert 0 < len(lines) < 10  # 640 tokens at 128K (reference p.4) stops before the top 10


async def test_prompt_sources_linking_out_of_the_project_are_skipped_and_named_once(project, tmp_path):
    """paicli issue 23, item 3: nothing of the target reaches the model; the user sees one line."""
    secret = tmp_path / "secret"
    secret.write_text("SECRET-KEY-MATERIAL", encoding="utf-8")
    (project / "PAI.md").symlink_to(secret)
    (project / ".paicli" / "prompts").mkdir(parents=True)
    (project / ".paicli" / "PAI.local.md").symlink_to("../../secret")
    (project / ".paicli" / "prompts" / "base.md").symlink_to(secret)
    model = ScriptedChatModel([ai("一"), ai("二")])
    h = Harness(model, project, clock=lambda: FIXED, prompt_home=tmp_path / "home")
    await h.turn("你好")
    await h.turn("再说一次")
    assert not any("SECRET-KEY-MATERIAL" in str(m.content) for prompt in model.seen for m in prompt)
    skipped = [n for n in h.notices if n.startswith("⚠️ 已跳过 ")]
    assert [n.split("：")[0] for n in skipped] == [f"⚠️ 已跳过 {project / 'PAI.md'}",
                                                   f"⚠️ 已跳过 {project / '.paicli' / 'PAI.local.md'}",
                                                   f"⚠️ 已跳过 {project / '.paicli' / 'prompts' / 'base.md'}"]
    assert all(f"它链接到 {secret}" in n for n in skipped)
