"""A mode is one row of ``paicli.modes.MODES`` (issue 25): every surface that names a mode derives
from it, and the repository's langgraph.json matches it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from paicli.__main__ import parser
from paicli.commands import dispatch as commands
from paicli.modes import MODE_SPECS, MODES, RUN_MODES
from paicli.studio.command import write_config
from paicli.prompts import MODE_FILES, loop_prompt

ROOT = Path(__file__).resolve().parents[2]


def test_the_repositorys_langgraph_json_serves_exactly_the_registered_modes():
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert graphs == {m.studio_graph: f"./paicli/studio/graphs.py:{m.studio_graph}" for m in MODES}


@pytest.mark.parametrize("spec", MODES, ids=lambda m: m.name)
def test_every_mode_surfaces_in_help_completion_studio_and_prompts(spec, tmp_path):
    help_text = parser().format_help()
    assert spec.flag in parser()._option_string_actions["--mode"].choices
    assert spec.summary.split("：")[0] in help_text  # --help names it with its summary
    written = json.loads(write_config(tmp_path).read_text())["graphs"]
    assert written[spec.studio_graph] == f"paicli.studio.graphs:{spec.studio_graph}"
    assert spec.prompt in MODE_FILES and spec.prompt == loop_prompt(spec.name)
    if spec.command is None:  # ReAct, the default, has no slash command
        assert not spec.runs_apart
        return
    assert spec.command in commands.NAMES  # completion
    assert any(line.strip().startswith(f"{spec.command} [任务] - {spec.command_help}") for line in commands.help_lines())
    assert spec.name in RUN_MODES and spec.banner and spec.cancelled and spec.next_input


# The modules that list modes; each must take them from the registry, never spell one itself.
SURFACES = ["paicli/__main__.py", "paicli/commands/dispatch.py", "paicli/studio/command.py", "paicli/studio/graphs.py"]


@pytest.mark.parametrize("surface", SURFACES)
def test_no_surface_names_a_mode_itself(surface):
    """The checks above hold for today's rows even when a surface lists them by hand (a literal
    ``("/plan", "/team")``); a row added later would then be missing there. So no surface may
    hold a mode's name, command or texts as a literal."""
    words = {w for m in MODES for w in (m.name, m.command, m.summary, m.command_help, m.studio_graph) if w}
    tree = ast.parse((ROOT / surface).read_text(encoding="utf-8"))
    spelled = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in words}
    assert not spelled, f"{surface} names {sorted(spelled)}: take them from paicli.modes.MODES"


def test_help_shows_each_modes_summary_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "paicli", "--help"], capture_output=True, text=True, check=True).stdout
    flat = " ".join(out.split())
    for spec in MODES:
        assert spec.summary in flat


def test_the_registry_is_light_to_import():
    """``paicli --help`` reads the registry: it must not import LangGraph or a mode's graph."""
    code = ("import sys, paicli.modes; "
            "print(sorted(m for m in sys.modules if m.startswith(('paicli.graphs', 'langgraph', 'paicli.nodes'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_the_studio_module_compiles_one_graph_per_mode(monkeypatch, tmp_path):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    monkeypatch.setenv("PAICLI_API_KEY", "x")
    from paicli.studio import graphs as studio

    for spec in MODES:
        graph = getattr(studio, spec.studio_graph)
        assert graph.name == spec.studio_graph
        assert graph.context_schema is studio.CONTEXTS[spec.name] and studio.CONTEXTS[spec.name]().mode == spec.name



def test_plan_and_team_keep_the_mode_state_the_runner_reads():
    from typing import get_type_hints

    from paicli.nodes.core.state import ModeState
    from paicli.nodes.plan.state import PlanState
    from paicli.nodes.team.state import TeamState

    shared = get_type_hints(ModeState, include_extras=True)
    assert {"submitted", "outcome", "status"} <= set(shared)
    for state in (PlanState, TeamState):
        assert {k: v for k, v in get_type_hints(state, include_extras=True).items() if k in shared} == shared


@pytest.mark.parametrize("spec", MODES, ids=lambda m: m.name)
def test_mode_flag_makes_every_repl_input_a_run_of_that_mode(spec, tmp_path, monkeypatch):
    from paicli.app import App

    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    monkeypatch.setenv("PAICLI_API_KEY", "k")

    class Args:
        mode, session, project, yes = spec.flag, None, None, False

    app = App(Args())
    assert app.mode_for_input() == spec.name and app.mode_for_input() == spec.name
