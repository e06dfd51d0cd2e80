"""The assembled ReAct system prompt, pinned byte for byte (reference q.2).

A change to any prompt file shows up here as a diff to review. To accept one on purpose:
``PAICLI_UPDATE_SNAPSHOTS=1 pytest tests/unit/test_prompt_snapshot.py``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from paicli.memory.context.turn_memory import is_memory_context, memory_message
from paicli.memory.longterm.entry import Entry
from paicli.memory.longterm.retriever import format_block
from paicli.prompts import LOOP_PROMPTS, assemble_system_prompt
from paicli.prompts.pai_md import load_project_context
from paicli.tools.skills.library import SkillLibrary

SNAPSHOT = Path(__file__).parent / "snapshots" / "system_prompt_react.txt"
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def _prompt(tmp_path: Path) -> str:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "PAI.md").write_text("# 项目约定\n\n构建用 `mvn -q test`。\n", encoding="utf-8")
    pai = load_project_context(project, home).replace(str(project), "<project>")
    # Since issue 13 the turn's memories are not in the system prompt (nodes/core/request.py).
    skills = SkillLibrary(home).index(project)  # the built-in skills only (reference q.2 item 7)
    return assemble_system_prompt(mode="agent", approval="auto", now=NOW, skills=skills, project_context=pai)


def test_the_assembled_prompt_matches_its_snapshot(tmp_path):
    prompt = _prompt(tmp_path)
    if os.environ.get("PAICLI_UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.write_text(prompt, encoding="utf-8")
    assert prompt == SNAPSHOT.read_text(encoding="utf-8")


@pytest.mark.parametrize("key", sorted(set(LOOP_PROMPTS.values())))
def test_each_modes_loop_prompt_matches_its_snapshot(key):
    """The agent loop's prompt in every other mode (``paicli.prompts.LOOP_PROMPTS``), so a new mode's
    prompt is pinned with no new test: its snapshot is written on the first run, to commit."""
    prompt = assemble_system_prompt(mode=key, approval="auto", now=NOW, project_context="# 项目约定")
    snapshot = SNAPSHOT.parent / f"system_prompt_{key}.txt"
    if os.environ.get("PAICLI_UPDATE_SNAPSHOTS") == "1" or not snapshot.exists():
        snapshot.write_text(prompt, encoding="utf-8")
    assert prompt == snapshot.read_text(encoding="utf-8")


def test_project_context_is_last_and_holds_pai_md_only(tmp_path):
    prompt = _prompt(tmp_path)
    order = ["## Identity", "## Language", "## Memory Policy", "## Personality", "## Context Management",
             "## Skills", "- commit-message（builtin）", "## Runtime Context", "## Project Context", "## PAI.md 项目记忆"]
    positions = [prompt.index(heading) for heading in order]
    assert positions == sorted(positions)
    assert prompt.rstrip().endswith("构建用 `mvn -q test`。") and "## 相关长期记忆" not in prompt


def test_the_turn_memory_message_keeps_the_reference_block():
    memories = [Entry("fact-0000aaaa", "项目使用 Java 17", timestamp=NOW),
                Entry("fact-0000bbbb", "提交前运行全量测试", timestamp=NOW, metadata={"verification": "unverified"})]
    message = memory_message(format_block(memories, 640, NOW, tz=UTC))
    assert message.content == (
        "## 相关长期记忆\n\n以下记忆是线索而不是事实；涉及版本、配置、路径等可能变化的信息，行动前先对照当前文件核实。\n\n"
        "- [FACT] 项目使用 Java 17（写入 2026-11-29，最后核实 2026-11-29）\n"
        "- [FACT][自动提取，待核实] 提交前运行全量测试（写入 2026-11-29，尚未经用户核实）")
    assert is_memory_context(message)


def test_a_session_without_web_search_is_told_so_and_the_prompt_is_pinned():
    """issue 39: no search service, no ``web_search`` line in ``## Tools``, and one section saying so."""
    prompt = assemble_system_prompt(mode="agent", approval="auto", now=NOW, web_search=False)
    snapshot = SNAPSHOT.parent / "system_prompt_react_no_web_search.txt"
    if os.environ.get("PAICLI_UPDATE_SNAPSHOTS") == "1" or not snapshot.exists():
        snapshot.write_text(prompt, encoding="utf-8")
    assert prompt == snapshot.read_text(encoding="utf-8")
    assert "- `web_search`" not in prompt and "`web_search` 不可用" in prompt
    assert "- `web_search`" in assemble_system_prompt(mode="agent", approval="auto", now=NOW)
