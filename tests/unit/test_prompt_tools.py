"""Issue 37 item 7: a prompt names only tools that exist.

Every backticked snake_case word of a prompt file (`grep_code`, `replace_all`) must be a tool of
the session's table (``paicli.run.wiring.make_deps``: the built-ins and the bound ones) or a
parameter of one; the Plan and Team prompts tell the model to call `search_code`, so it must be there.
"""

from __future__ import annotations

import re
from pathlib import Path

from paicli import prompts
from paicli.config.settings import load_settings
from paicli.run.wiring import make_deps

PROMPTS = Path(prompts.__file__).parent
NAMED = re.compile(r"`([a-z]+(?:_[a-z]+)+)")


def session_tools(tmp_path):
    settings = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path / "home"), "PAICLI_API_KEY": "k"})
    return make_deps(settings, auto_extract=False).tools


def test_every_tool_a_prompt_names_is_in_the_session_s_table(tmp_path):
    tools = session_tools(tmp_path)
    parameters = {name for spec in tools.values() for name in spec.parameters.get("properties", {})}
    unknown = sorted({(md.relative_to(PROMPTS).as_posix(), word)
                      for md in PROMPTS.rglob("*.md") for word in NAMED.findall(md.read_text(encoding="utf-8"))
                      if word not in tools and word not in parameters})
    assert unknown == []


def test_plan_tasks_and_team_workers_are_told_of_search_code_and_have_it(tmp_path):
    tools = session_tools(tmp_path)
    for mode in ("plan.md", "team-worker.md"):
        assert "`search_code`" in (PROMPTS / "modes" / mode).read_text(encoding="utf-8")
    assert {"search_code", "code_map"} <= set(tools)
    assert tools["search_code"].parallel_safe and tools["code_map"].parallel_safe


def test_a_name_that_is_no_tool_is_caught(tmp_path):
    tools = session_tools(tmp_path)
    assert "browser_connect" not in tools and NAMED.findall("用 `browser_connect` 打开") == ["browser_connect"]
