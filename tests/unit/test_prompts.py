from datetime import datetime, timezone

import pytest

from paicli.prompts import PromptError, PromptSources, assemble_system_prompt, load_resource, render

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
ORDER = ["## Identity", "## Language", "## Personality", "## Mode: Agent", "## Approval Mode",
         "## Context Management", "## Handoff", "## Runtime Context", "## Project Context"]


def test_sections_come_in_prefix_cache_order():
    prompt = assemble_system_prompt(mode="agent", approval="auto", now=NOW, project_context="PAI.md text")
    positions = [prompt.index(h) for h in ORDER]
    assert positions == sorted(positions)
    assert "- 当前日期: 2026-11-29\n- 当前时区: UTC" in prompt


def test_approval_level_selects_the_approval_text():
    assert "偏自动执行" in assemble_system_prompt(mode="agent", approval="yes", now=NOW)
    assert "可能触发 HITL 审批" in assemble_system_prompt(mode="agent", approval="auto", now=NOW)
    assert "偏保守" in assemble_system_prompt(mode="agent", approval="ask", now=NOW)


def test_project_override_wins_over_builtin(tmp_path):
    override = tmp_path / "proj" / ".paicli" / "prompts"
    override.mkdir(parents=True)
    (override / "handoff.md").write_text("## Handoff\n\n项目自己的交接说明")
    sources = PromptSources.for_project(tmp_path / "home", tmp_path / "proj")
    assert "项目自己的交接说明" in assemble_system_prompt(mode="agent", approval="auto", now=NOW, sources=sources)


def test_resource_paths_cannot_escape_and_blank_files_are_errors(tmp_path):
    with pytest.raises(PromptError, match="not allowed"):
        load_resource("../secrets.md", PromptSources())
    (tmp_path / "blank.md").write_text("  \n")
    with pytest.raises(PromptError, match="missing"):
        load_resource("blank.md", PromptSources((tmp_path,)))


def test_unknown_template_variable_is_an_error():
    assert render("任务: {{taskType}}", {"taskType": "分析"}) == "任务: 分析"
    with pytest.raises(PromptError, match="taskDescription"):
        render("{{taskDescription}}", {})


def test_a_project_override_linking_out_of_the_project_is_not_read(tmp_path):
    """paicli issue 23, item 3: the fence is the project, not the override folder's real path."""
    from paicli.prompts import BUILTIN_DIR, outside_links

    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (elsewhere / "modes").mkdir(parents=True)
    (elsewhere / "modes" / "agent.md").write_text("STOLEN PROMPT", encoding="utf-8")
    (project / ".paicli").mkdir(parents=True)
    (project / ".paicli" / "prompts").symlink_to(elsewhere)
    sources = PromptSources.for_project(None, project)
    assert load_resource("modes/agent.md", sources) == (BUILTIN_DIR / "modes" / "agent.md").read_text(encoding="utf-8")
    assert outside_links(sources) == [f"⚠️ 已跳过 {project / '.paicli' / 'prompts'}：它链接到 {elsewhere}，"
                                      f"在 {project} 之外，内容不会发给模型"]
    (project / ".paicli" / "prompts").unlink()
    (project / ".paicli" / "prompts").mkdir()
    (project / ".paicli" / "prompts" / "modes").mkdir()
    (project / ".paicli" / "prompts" / "modes" / "agent.md").write_text("OWN PROMPT", encoding="utf-8")
    assert load_resource("modes/agent.md", sources) == "OWN PROMPT" and outside_links(sources) == []
