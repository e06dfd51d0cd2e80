"""load_skill and the injection message: the text, cutting at a line, every budget case, the
untrusted path, skill files and escapes (reference s.6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.context.rounds import SKILL_INJECTION, internal_kind, rebuild, skill_names, user_indices
from paicli.tools.base import ToolContext
from paicli.tools.boundary import wrap
from paicli.tools.registry import run_tool
from paicli.tools.skills.injection import MARKER, cut, settle
from paicli.tools.skills.library import SkillLibrary
from paicli.tools.skills.load import load_skill_spec
from tests.unit.test_skills_catalog import home, project, write_skill  # noqa: F401 (fixtures)


async def load(library: SkillLibrary, project: Path, **args):
    spec = load_skill_spec(library)
    return await run_tool("load_skill", args, ToolContext(root=project), {"load_skill": spec})


def step_of(result, call_id: str = "c1") -> list:
    """The ToolMessage execute_tools makes of a load_skill result."""
    extra = {"artifact": result.artifact} if result.artifact else {}
    return [ToolMessage(wrap("load_skill", result), tool_call_id=call_id, name="load_skill",
                        status="success" if result.ok else "error", **extra)]


def test_cut_ends_at_a_line_boundary_and_names_the_next_line():
    text = "".join(f"line {i:03}\n" for i in range(1, 101))  # 9 chars a line
    shown, rest = cut(text, 1, 95)
    assert shown.splitlines()[-1] == "line 010" and rest == 11
    assert cut(text, 11, 95)[0].startswith("line 011")
    assert cut(text, 1, 10_000) == (text.rstrip("\n"), None)
    assert cut("x" * 50 + "\nshort\n", 1, 20) == ("x" * 20, 2)  # one over-long line is cut inside


async def test_a_trusted_load_is_a_confirmation_and_the_body_goes_into_one_marked_message(home, project):
    directory = write_skill(home / "skills", "review", body="# 审查\n先读 diff。\n")
    result = await load(SkillLibrary(home), project, name="review")
    assert result.ok and result.startswith("已加载 skill 'review' 的完整指引（")
    assert "先读 diff" not in result  # the body is not a tool result
    settled = settle([], step_of(result))
    tool, injected = settled
    assert tool.artifact is None and tool.status == "success" and "已加载 skill 'review'" in tool.content
    assert internal_kind(injected) == SKILL_INJECTION
    lines = injected.content.splitlines()
    assert lines[0] == MARKER
    assert lines[1] == "以下是刚才 load_skill 加载的 Skill 指引，请按指引继续当前任务。"
    assert "## 已加载 Skill：review（来源：user）" in lines
    assert f"Skill 目录：{directory}" in lines
    assert any(line.startswith("文中 references/、scripts/ 等相对路径都以 Skill 目录为基准") for line in lines)
    assert "# 审查\n先读 diff。" in injected.content and lines[-1] == "---"
    # the compaction code recognises it: internal, named, never a round
    assert skill_names(injected) == ["review"] and user_indices(settled) == []


async def test_a_long_body_is_cut_at_a_line_with_the_offset_hint_and_offset_continues_it(home, project):
    body = "".join(f"第 {i} 步：{'做事' * 40}\n" for i in range(1, 200))
    write_skill(home / "skills", "long", body=body)
    library = SkillLibrary(home)
    first = settle([], step_of(await load(library, project, name="long")))[-1].content
    hint = first[first.index("...(Skill 正文较长"):]
    offset = int(hint.split("offset=")[1].rstrip(")\n-"))
    assert f'load_skill(name="long", file="SKILL.md", offset={offset})' in hint
    assert f"第 {offset - 1} 步" in first and f"第 {offset} 步" not in first
    more = await load(library, project, name="long", file="SKILL.md", offset=offset)
    second = settle([], step_of(more))[-1].content
    assert f"## 已加载 Skill：long（来源：user，第 {offset} 行起）" in second
    assert f"写出绝对路径。\n\n第 {offset} 步" in second


async def test_an_active_skill_is_still_in_context_and_not_injected_twice(home, project):
    write_skill(home / "skills", "review")
    library = SkillLibrary(home)
    history = settle([], step_of(await load(library, project, name="review")))
    again = settle(history, step_of(await load(library, project, name="review"), "c2"))
    assert len(again) == 1 and again[0].status == "success"
    assert "Skill 'review' 的正文还在当前上下文里" in again[0].content
    # two loads of one skill in one step: one section
    twice = settle([], [*step_of(await load(library, project, name="review")),
                        *step_of(await load(library, project, name="review"), "c2")])
    assert [internal_kind(m) for m in twice] == [None, None, SKILL_INJECTION]
    assert twice[2].content.count("## 已加载 Skill：review") == 1


async def test_over_the_budget_the_load_fails_and_tells_the_model_to_use_what_is_loaded(home, project):
    write_skill(home / "skills", "a", body="甲" * 3000)
    write_skill(home / "skills", "b", body="乙" * 3000)
    library = SkillLibrary(home, budget=4000)
    history = settle([], step_of(await load(library, project, name="a")))
    refused = settle(history, step_of(await load(library, project, name="b"), "c2"))
    assert len(refused) == 1 and refused[0].status == "error"
    assert "load_skill 未加载 'b'" in refused[0].content and "4000 字符预算" in refused[0].content
    assert "请用已经加载的指引完成当前任务" in refused[0].content
    assert refused[0].artifact is None  # the body is not kept in the refused result


async def test_the_budget_counts_only_injections_still_in_the_history(home, project):
    write_skill(home / "skills", "a", body="甲" * 3000)
    write_skill(home / "skills", "b", body="乙" * 3000)
    library = SkillLibrary(home, budget=4000)
    call = AIMessage("", tool_calls=[{"id": "c1", "name": "load_skill", "args": {"name": "a"}}])
    history = [HumanMessage("需求"), call, *settle([], step_of(await load(library, project, name="a"))),
               AIMessage("好"), HumanMessage("下一个需求"), AIMessage("好")]
    assert not settle(history, step_of(await load(library, project, name="b"), "c2"))[0].status == "success"
    summarised = rebuild(history, 5, "摘要")  # the injection was in the summarised part
    assert "[Skill 正文已随压缩移出上下文：a。还需要按这些 Skill 操作时，重新调用 load_skill 加载。]" in summarised[0].content
    fits = settle(summarised, step_of(await load(library, project, name="b"), "c2"))
    assert internal_kind(fits[-1]) == SKILL_INJECTION and "## 已加载 Skill：b" in fits[-1].content
    # two loads of one step share the budget too
    both = settle([], [*step_of(await load(library, project, name="a")),
                       *step_of(await load(library, project, name="b"), "c2")])
    assert [m.status for m in both[:2]] == ["success", "error"]


async def test_an_untrusted_project_skill_comes_back_as_data_and_is_injected_once_trusted(home, project):
    write_skill(project / ".paicli" / "skills", "deploy", body="运行 ./deploy.sh\n")
    library = SkillLibrary(home)
    result = await load(library, project, name="deploy")
    assert not result.artifact and "用户尚未信任它" in result and "运行 ./deploy.sh" in result
    assert settle([], step_of(result)) == step_of(result)  # nothing injected
    library.trust(library.lookup(project, "deploy").skill)
    trusted = settle([], step_of(await load(library, project, name="deploy")))
    assert "运行 ./deploy.sh" in trusted[-1].content and "（来源：project）" in trusted[-1].content


@pytest.mark.parametrize("args, text", [
    ({"name": ""}, "load_skill 失败: name 不能为空"),
    ({"name": "nope"}, "Skill 'nope' 未找到，可用 /skill list 查看可用 skill"),
    ({"name": "../x"}, "Skill '../x' 未找到"),
    ({"name": "bad"}, "Skill 'bad' 无法使用：front matter 缺少 description"),
    ({"name": "paused"}, "Skill 'paused' 已被禁用，可用 /skill on paused 启用"),
])
async def test_load_failures_say_what_to_do(home, project, args, text):
    write_skill(home / "skills", "bad", front="name: bad\n")
    write_skill(home / "skills", "paused")
    library = SkillLibrary(home)
    library.set_enabled("paused", False)
    result = await load(library, project, **args)
    assert not result.ok and result.startswith(text)


async def test_a_skill_file_is_read_as_ordinary_data(home, project):
    directory = write_skill(home / "skills", "guide")
    (directory / "references").mkdir()
    (directory / "references" / "api.md").write_text("".join(f"接口 {i}\n" for i in range(1, 6)))
    result = await load(SkillLibrary(home), project, name="guide", file="references/api.md", offset=3)
    assert result.ok and not result.artifact
    assert result.startswith("Skill 文件 guide/references/api.md（第 3 行起，共 5 行）:\n接口 3\n接口 4\n接口 5")


@pytest.mark.parametrize("file", ["../other/SKILL.md", "/etc/passwd", "references/../../other/SKILL.md", "link.md",
                                  "linked/secret.md"])
async def test_a_file_outside_the_skill_is_refused(home, project, tmp_path, file):
    directory = write_skill(home / "skills", "guide")
    write_skill(home / "skills", "other")
    (tmp_path / "secret.md").write_text("secret")
    (directory / "link.md").symlink_to(tmp_path / "secret.md")
    (directory / "linked").symlink_to(tmp_path)
    result = await load(SkillLibrary(home), project, name="guide", file=file)
    assert not result.ok and result.startswith("🛡️ 策略拒绝: Skill 文件")


async def test_a_skill_directory_linked_from_elsewhere_reads_its_own_files(home, project, tmp_path):
    elsewhere = write_skill(tmp_path / "mine", "shared")
    (elsewhere / "notes.md").write_text("笔记")
    (home / "skills").mkdir(parents=True)
    (home / "skills" / "shared").symlink_to(elsewhere)
    result = await load(SkillLibrary(home), project, name="shared", file="notes.md")
    assert result.ok and result.endswith("笔记")
