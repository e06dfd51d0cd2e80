"""nodes.dag: the dependency rules Plan and Team share (issue 25 item 4)."""

from __future__ import annotations

from nodes import dag
from nodes.plan import model
from nodes.team import schedule

UNITS = [{"id": "a", "dependencies": []}, {"id": "b", "dependencies": ["a"]},
         {"id": "c", "dependencies": []}, {"id": "d", "dependencies": ["b", "c"]}]


def test_ready_is_every_pending_unit_whose_dependencies_completed_in_order():
    statuses = {"a": "done", "b": "todo", "c": "running", "d": "todo"}
    assert [u["id"] for u in dag.ready(UNITS, statuses.__getitem__, pending="todo", completed="done")] == ["b"]
    statuses["c"] = "done"
    assert [u["id"] for u in dag.ready(UNITS, statuses.__getitem__, pending="todo", completed="done")] == ["b"]
    statuses["b"] = "done"
    assert [u["id"] for u in dag.ready(UNITS, statuses.__getitem__, pending="todo", completed="done")] == ["d"]


def test_dependents_are_direct_and_indirect():
    assert dag.dependents(UNITS, "a") == ["b", "d"]
    assert dag.dependents(UNITS, "c") == ["d"]
    assert dag.dependents(UNITS, "d") == []


def test_progress_is_one_type_for_both_modes():
    plan = {"tasks": [{"id": "task_1", "status": model.COMPLETED, "dependencies": []},
                      {"id": "task_2", "status": model.PENDING, "dependencies": ["task_1"]},
                      {"id": "task_3", "status": model.FAILED, "dependencies": []}],
            "order": ["task_1", "task_3", "task_2"]}
    assert model.progress(plan) == dag.Progress(1, 3) and round(model.progress(plan).fraction, 2) == 0.33
    assert dag.Progress(0, 0).fraction == 1.0
    steps = [{"id": "step_1", "dependencies": []}, {"id": "step_2", "dependencies": ["step_1"]}]
    records = {"step_1": {"status": schedule.COMPLETED}}
    assert dag.progress(steps, lambda i: schedule.status(records, i), completed=schedule.COMPLETED) == dag.Progress(1, 2)
    assert [s["id"] for s in schedule.ready(steps, records)] == ["step_2"]
    assert [t["id"] for t in model.ready(plan)] == ["task_2"] and model.dependents(plan, "task_1") == ["task_2"]


def test_collected_clears_the_results_and_merges_what_the_units_approved_and_read():
    state = {"approved_all": ["write_file"], "external_sources": ["web_fetch:https://a.example/"]}
    results = {"t1": {"approved_all": ["write_file", "execute_command"], "external_sources": []},
               "t2": {"approved_all": [], "external_sources": ["web_fetch:https://b.example/"]}}
    assert dag.collected(state, results) == {
        "results": None, "approved_all": ["write_file", "execute_command"],
        "external_sources": ["web_fetch:https://a.example/", "web_fetch:https://b.example/"]}
