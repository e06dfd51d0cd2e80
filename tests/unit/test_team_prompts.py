"""The team members' system prompts (reference s.5 Prompts, q.2), pinned byte for byte.

``PAICLI_UPDATE_SNAPSHOTS=1`` rewrites the snapshots, as for the ReAct prompt.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from paicli.prompts import assemble_system_prompt

SNAPSHOTS = Path(__file__).parent / "snapshots"
NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
# The sentences the orchestrator relies on (reference s.5), which a rewording must keep.
CONTRACT = {
    "team-planner": ['"steps"', "step_1", "dependencies", "只输出 JSON，不要有其他内容。"],
    "team-reviewer": ['{"approved": true, "summary": "检查摘要", "issues": [], "suggestions": []}',
                      "approved 必须是 JSON 布尔值 true 或 false。编排器只读取这个字段：回复不是单个 JSON 对象、"
                      "缺少 approved 或类型不对时，一律按未通过处理，不会从文字里猜结论。",
                      "只输出 JSON，不要有其他内容。"],
    "team-worker": ["你是 Multi-Agent 协作中的任务执行专家。你的职责是根据给定任务步骤，调用工具完成具体操作。",
                    "`glob_files` / `grep_code` / `read_file`"],
}


@pytest.mark.parametrize("mode", sorted(CONTRACT))
def test_each_member_prompt_matches_its_snapshot_and_keeps_its_contract(mode):
    prompt = assemble_system_prompt(mode=mode, approval="auto", now=NOW, project_context="# 项目约定")
    snapshot = SNAPSHOTS / f"system_prompt_{mode}.txt"
    if os.environ.get("PAICLI_UPDATE_SNAPSHOTS") == "1" or not snapshot.exists():
        snapshot.write_text(prompt, encoding="utf-8")
    assert prompt == snapshot.read_text(encoding="utf-8")
    assert all(sentence in prompt for sentence in CONTRACT[mode])
    assert f"## Mode: {mode.replace('-', ' ').title()}" in prompt
