"""load_skill inside the react graph (reference s.6): the index in the system prompt, the body as
a marked internal message after the step's results, freed by a summary and loadable again."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.context.rounds import SKILL_INJECTION, internal_kind
from tests.graphs.conftest import Harness
from tests.graphs.test_compaction_loop import SUMMARY, rounds
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.unit.test_skills_catalog import write_skill
from paicli.tools.registry import BUILTIN_TOOLS
from paicli.tools.skills.library import SkillLibrary
from paicli.tools.skills.load import load_skill_spec

BODY = "# 审查流程\n1. 先读 diff。\n2. 每个问题给出文件和行号。\n"


def harness(model: ScriptedChatModel, project, home, **extra) -> Harness:
    library = SkillLibrary(home)
    return Harness(model, project, tools={**BUILTIN_TOOLS, "load_skill": load_skill_spec(library)},
                   skills=library, **extra)


def injections(prompt: list) -> list:
    return [m for m in prompt if internal_kind(m) == SKILL_INJECTION]


async def test_load_skill_puts_the_body_after_the_results_and_the_confirmation_in_the_result(project, tmp_path):
    home = tmp_path / "home"
    write_skill(home / "skills", "review", "审查代码时使用", BODY)
    model = ScriptedChatModel([ai("", tool_call("load_skill", {"name": "review"})), ai("按流程审查完了")])
    h = harness(model, project, home)
    await h.turn("帮我审查这次改动")
    model.assert_consumed()
    system = model.seen[0][0].content
    assert "## Skills" in system and "- review（user）：审查代码时使用" in system
    assert system.index("## Skills") < system.index("## Runtime Context")
    assert "load_skill" in [t["function"]["name"] for t in model.seen_tools[0]]
    *_, call, result, injected = model.seen[1]
    assert isinstance(call, AIMessage) and isinstance(result, ToolMessage)
    assert "已加载 skill 'review' 的完整指引" in result.content and "先读 diff" not in result.content
    assert isinstance(injected, HumanMessage) and injected.content.startswith("[PAICLI_SKILL_INJECTION]\n")
    assert "## 已加载 Skill：review（来源：user）" in injected.content and "2. 每个问题给出文件和行号。" in injected.content
    h.check_prompts()
    stored = await h.messages()
    assert not any(getattr(m, "artifact", None) for m in stored)  # the body is stored once, in the injection


async def test_a_summary_removes_the_body_names_it_and_a_new_load_works(project, tmp_path):
    home = tmp_path / "home"
    write_skill(home / "skills", "review", "审查代码时使用", BODY)
    model = ScriptedChatModel([
        ai("", tool_call("load_skill", {"name": "review"})), ai("审查完了"),
        ai(SUMMARY),
        ai("", tool_call("load_skill", {"name": "review"})), ai("又审查完了"),
    ])
    h = harness(model, project, home, window=16_000)
    await h.turn("审查第一处改动")
    await h.graph.aupdate_state(h.config, {"messages": rounds(5, 4000)}, as_node="call_model")
    await h.turn("再审查一处")
    model.assert_consumed()
    summary_request, after_summary, after_load = model.seen[2:]
    assert "先读 diff" not in str([m.content for m in summary_request])  # skill bodies are never summarised
    assert "[Skill 正文已随压缩移出上下文：review。还需要按这些 Skill 操作时，重新调用 load_skill 加载。]" in after_summary[1].content
    assert injections(after_summary) == []
    assert "还在当前上下文里" not in after_load[-2].content
    assert len(injections(after_load)) == 1 and "先读 diff" in injections(after_load)[0].content
    h.check_prompts()


async def test_without_a_library_there_is_no_index_and_no_load_skill(project):
    model = ScriptedChatModel([ai("你好")])
    h = Harness(model, project)
    await h.turn("你好")
    assert "## Skills" not in model.seen[0][0].content
    assert "load_skill" not in [t["function"]["name"] for t in model.seen_tools[0]]
