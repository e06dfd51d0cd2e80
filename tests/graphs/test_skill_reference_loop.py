"""save_skill_reference inside the react graph (reference t): it interrupts for approval in the
default mode every time, and "approve all" does not cover the next call."""

from __future__ import annotations

from tests.graphs.conftest import Harness
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.unit.test_skills_catalog import write_skill
from paicli.tools.registry import BUILTIN_TOOLS
from paicli.tools.skills.library import SkillLibrary
from paicli.tools.skills.reference import save_skill_reference_spec


def save(content: str, call_id: str):
    args = {"name": "notes", "file": "references/tips.md", "content": content}
    return tool_call("save_skill_reference", args, call_id)


async def test_each_call_asks_in_auto_mode_and_approve_all_does_not_cover_the_next(project, tmp_path):
    home = tmp_path / "home"
    skill = write_skill(home / "skills", "notes")
    library = SkillLibrary(home)
    model = ScriptedChatModel([ai("", save("- 一", "s1")), ai("", save("- 二", "s2")), ai("好了")])
    h = Harness(model, project, approval="auto", skills=library,
                tools={**BUILTIN_TOOLS, "save_skill_reference": save_skill_reference_spec(library)})
    [question] = await h.turn("把经验存进 notes")
    assert question.value["tool"] == "save_skill_reference" and question.value["danger"] == "🔴 高危"
    assert question.value["notice"].startswith("写入 Skill 参考文件 notes/references/tips.md（")
    assert not (skill / "references").exists()
    [again] = await h.resume({"decision": "approve_all"})
    assert (skill / "references" / "tips.md").read_text(encoding="utf-8") == "- 一"
    assert again.value["tool"] == "save_skill_reference"
    assert await h.resume({"decision": "reject", "reason": "够了"}) == []
    assert (skill / "references" / "tips.md").read_text(encoding="utf-8") == "- 一"
    assert "[HITL] 操作已被拒绝：够了。写入 Skill 参考文件" in model.seen[-1][-1].content
    model.assert_consumed()
    h.check_prompts()
