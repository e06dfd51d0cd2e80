"""Studio serves the Team graph (issue 15): registered in both configs, with a team context."""

from __future__ import annotations

import json
from pathlib import Path

from paicli.studio.command import write_config

ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_configs_register_team(tmp_path, monkeypatch):
    assert json.loads((ROOT / "langgraph.json").read_text())["graphs"]["team"] == "./paicli/studio/graphs.py:team"
    written = json.loads(write_config(tmp_path).read_text())
    assert written["graphs"]["team"] == "paicli.studio.graphs:team"


def test_the_served_team_graph_runs_its_workers_in_team_mode(monkeypatch, tmp_path):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    monkeypatch.setenv("PAICLI_API_KEY", "x")
    from paicli.studio import graphs as studio

    assert studio.team.name == "team"
    assert studio.CONTEXTS["team"]().mode == "team"
    assert {"plan_team", "schedule", "step", "collect", "finish"} <= set(studio.team.get_graph().nodes)


def test_the_served_plan_graph_runs_its_tasks_in_plan_mode(monkeypatch, tmp_path):
    """Without its own context a Studio plan run would be mode "react": tasks would get the
    agent prompt and the ledger would label the run react."""
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    monkeypatch.setenv("PAICLI_API_KEY", "x")
    from paicli.studio import graphs as studio

    assert studio.CONTEXTS["plan"]().mode == "plan"
    assert studio.plan.context_schema is studio.CONTEXTS["plan"]
