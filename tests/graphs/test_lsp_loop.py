"""The diagnostics node in the agent loop (issue 38), with a real server of our own
(``tests/support/fake_lsp.py``: a line holding ERROR is an error): what the model is sent after
an edit, in the ReAct conversation and in a Plan task."""

from __future__ import annotations

import sys

import pytest

from paicli.memory.context.rounds import LSP_DIAGNOSTICS, internal_kind, user_indices
from tests.graphs.conftest import Harness
from tests.graphs.plan_support import PLANNING, PlanHarness, plan_json, task_key
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from tests.support.language_servers import sandbox_in
from tests.unit.test_lsp_manager import FAKE, SLOW_MACHINE
from paicli.tools.lsp.manager import LanguageServers
from paicli.tools.lsp.options import LspOptions


@pytest.fixture
async def lsp(tmp_path):
    servers = LanguageServers(LspOptions(commands={"python": (sys.executable, FAKE, "ok")}, wait=SLOW_MACHINE),
                              sandbox_in(tmp_path))
    yield servers
    await servers.close()


def edit(path: str, old: str, new: str) -> dict:
    return tool_call("edit_file", {"path": path, "old_text": old, "new_text": new})


async def test_new_diagnostics_ride_after_the_step_results_and_are_no_round(project, lsp):
    (project / "app.py").write_text("x = 1\n")
    model = ScriptedChatModel([
        ai("", edit("app.py", "x = 1", "x = 1\nERROR a")),
        ai("", edit("app.py", "ERROR a", "ERROR a\ny = 2")),  # nothing new: no second message
        ai("", edit("app.py", "ERROR a\n", "")),  # the fix: nothing new either
        ai("好了"),
    ])
    h = Harness(model, project, lsp=lsp)
    assert await h.turn("改 app.py") == []
    model.assert_consumed()
    h.check_prompts()
    first, second, third, fourth = (prompt[1:] for prompt in model.seen)
    assert second[:len(first)] == first  # every request extends the last one (the prefix cache holds)
    told = second[-1]
    assert internal_kind(told) == LSP_DIAGNOSTICS and second[-2].type == "tool"
    assert "app.py（python）" in told.content and "错误 2:1 error here: ERROR a [fake]" in told.content
    assert len(user_indices(second)) == 1  # the user's own message only
    assert [internal_kind(m) for m in fourth].count(LSP_DIAGNOSTICS) == 1
    values = (await h.graph.aget_state(h.config)).values
    assert values["lsp"]["seen"] == {"app.py": []} and values["lsp"]["late"] == []


async def test_a_plan_task_gets_the_diagnostics_of_its_own_edit(project, lsp):
    task = "写 broken.py"
    model = ScriptedChatModel.by_content({PLANNING: [plan_json(("t", task, []))], task_key(task): [
        ai("", tool_call("write_file", {"path": "broken.py", "content": "ERROR here\n"})), ai("写好了")]})
    h = PlanHarness(model, project, lsp=lsp)
    assert await h.run("先写一个 broken.py，然后检查它的内容并报告") == []
    [_, after] = h.prompts_for(task_key(task))
    assert internal_kind(after[-1]) == LSP_DIAGNOSTICS and "broken.py（python）" in after[-1].content
    model.assert_consumed()
