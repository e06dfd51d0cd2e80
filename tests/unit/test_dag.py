"""paicli.nodes.dag: the dependency rules, the scheduler, the collector and the planner node Plan and
Team share (issue 25 item 4)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from paicli.nodes import dag
from paicli.nodes.plan import model
from paicli.nodes.plan.execute import PLAN
from paicli.nodes.team import schedule
from paicli.nodes.team.run import TEAM
from tests.support.properties import examples

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
    assert [s["id"] for s in dag.next_wave(TEAM, {"plan": {"steps": steps}, "records": records})] == ["step_2"]
    assert [t["id"] for t in model.ready(plan)] == ["task_2"] and model.dependents(plan, "task_1") == ["task_2"]


def test_collected_clears_the_results_and_merges_what_the_units_approved_and_read():
    state = {"approved_all": ["write_file"], "external_sources": ["web_fetch:https://a.example/"]}
    results = {"t1": {"approved_all": ["write_file", "execute_command"], "external_sources": []},
               "t2": {"approved_all": [], "external_sources": ["web_fetch:https://b.example/"]}}
    assert dag.collected(state, results) == {
        "results": None, "approved_all": ["write_file", "execute_command"],
        "external_sources": ["web_fetch:https://a.example/", "web_fetch:https://b.example/"]}


# The shared scheduler and collector (paicli.nodes.dag.make_schedule / make_collect), driven through a
# whole run the way both graphs drive them: schedule, run the wave, collect, until nothing is ready.

def toy_dag(cap: int) -> dag.Dag[dict]:
    return dag.Dag(units=lambda s: s["units"], status_of=lambda s: lambda i: s["statuses"].get(i, "todo"),
                   running=lambda s: s["running"], pending="todo", completed="done", failed="bad",
                   max_wave=cap, no_result="没有结果")


def start(state: dict, wave: list[dict]) -> dict:
    return {"running": [u["id"] for u in wave], "statuses": {**state["statuses"], **{u["id"]: "busy" for u in wave}}}


def apply(state: dict, done: list[dag.Finished], ctx) -> dict:
    return {"statuses": {**state["statuses"], **{f.id: f.status for f in done}}, "running": [],
            "texts": {**state.get("texts", {}), **{f.id: f.text for f in done}}}


async def run(units: list[dict], cap: int, fails: set[str], lost: set[str] = frozenset()) -> tuple[dict, list[list[str]]]:
    """The whole run; a unit in ``fails`` returns a failure, one in ``lost`` returns nothing."""
    toy = toy_dag(cap)
    schedule, collect = dag.make_schedule(toy, start), dag.make_collect(toy, apply)
    state: dict = {"units": units, "statuses": {}, "running": [], "approved_all": []}
    waves = []
    while True:
        state.update(await schedule(state))
        if not state["running"]:
            return state, waves
        waves.append(state["running"])
        # the units report in reverse order, as parallel units may
        state["results"] = {i: {"ok": i not in fails, "text": f"{i} 的结果", "approved_all": [f"tool_{i}"]}
                            for i in reversed(state["running"]) if i not in lost}
        state.update(await collect(state, None))


async def test_the_scheduler_runs_ready_units_in_order_at_most_a_batch_at_a_time():
    state, waves = await run(UNITS, 2, set())
    assert waves == [["a", "c"], ["b"], ["d"]]
    assert state["statuses"] == {u["id"]: "done" for u in UNITS} and state["results"] is None
    assert sorted(state["approved_all"]) == ["tool_a", "tool_b", "tool_c", "tool_d"]  # every unit's, merged
    assert (await run(UNITS, 1, set()))[1] == [["a"], ["b"], ["c"], ["d"]]


async def test_a_failed_dependency_keeps_its_dependents_pending_and_its_siblings_running():
    state, waves = await run(UNITS, 4, {"a"})
    assert waves == [["a", "c"]]
    assert state["statuses"] == {"a": "bad", "c": "done"}  # b and d never ran
    state, _ = await run(UNITS, 4, set(), lost={"c"})
    assert state["statuses"] == {"a": "done", "b": "done", "c": "bad"} and state["texts"]["c"] == "没有结果"


async def test_the_collector_hands_the_results_over_in_unit_order_whatever_order_they_came_in():
    seen = []
    collect = dag.make_collect(toy_dag(4), lambda state, done, ctx: seen.extend(done) or {})
    update = await collect({"units": UNITS, "statuses": {}, "running": ["c", "a"],
                            "results": {"c": {"ok": True, "text": 3, "retries": 1}, "a": {"ok": False}}}, None)
    assert [(f.id, f.status, f.text, f.ok) for f in seen] == [("a", "bad", "", False), ("c", "done", "3", True)]
    assert seen[1].result["retries"] == 1 and update["results"] is None


def dags(draw) -> tuple[list[dict], set[str], int]:
    n = draw(st.integers(1, 9))
    units = [{"id": f"u{k}", "dependencies": sorted(draw(st.sets(st.sampled_from([f"u{j}" for j in range(k)]), max_size=3))
                                                     if k else set())} for k in range(n)]
    return units, draw(st.sets(st.sampled_from([u["id"] for u in units]))), draw(st.integers(1, 4))


@settings(max_examples=examples(100), deadline=None)
@given(st.composite(dags)())
def test_every_unit_runs_once_after_its_dependencies_unless_one_of_them_failed(case):
    units, fails, cap = case
    state, waves = asyncio.run(run(units, cap, fails))
    ran = [i for b in waves for i in b]
    assert len(ran) == len(set(ran)) and all(0 < len(b) <= cap for b in waves)
    order = {u["id"]: k for k, u in enumerate(units)}
    assert all(b == sorted(b, key=order.get) for b in waves)
    blocked = {d for f in fails & set(ran) for d in dag.dependents(units, f)}
    assert set(ran) == {u["id"] for u in units} - blocked  # everything else ran, blocked units never
    for k, b in enumerate(waves):
        before = {i for earlier in waves[:k] for i in earlier}
        assert all(set(u["dependencies"]) <= before - fails for u in units if u["id"] in b)


def test_plan_and_team_read_the_same_graph_the_same_way():
    plan = {"plan": {"tasks": [{**u, "status": model.PENDING} for u in UNITS], "order": ["a", "c", "b", "d"]},
            "batch": ["c", "a"], "results": {"a": {"ok": True, "text": "A"}}}
    plan["plan"]["tasks"][0]["status"] = model.FAILED
    team = {"plan": {"steps": UNITS}, "records": {"a": {"status": schedule.FAILED}},
            "wave": [{"step": UNITS[0], "worker": "worker-1"}, {"step": UNITS[2], "worker": "worker-2"}],
            "results": {"a": {"ok": True, "text": "A"}}}
    assert [u["id"] for u in dag.next_wave(PLAN, plan)] == [u["id"] for u in dag.next_wave(TEAM, team)] == ["c"]
    assert [(f.id, f.ok, f.text) for f in dag.finished(PLAN, plan)] == [("a", True, "A"), ("c", False, "任务没有结果")]
    assert [(f.id, f.ok, f.text) for f in dag.finished(TEAM, team)] == [("a", True, "A"), ("c", False, "执行结果为空")]
    plan["plan"]["tasks"][0]["status"], team["records"] = model.COMPLETED, {"a": {"status": schedule.COMPLETED}}
    assert [u["id"] for u in dag.next_wave(PLAN, plan)] == ["c", "b"] and TEAM.max_wave == 2 and PLAN.max_wave == 4


async def test_the_planner_plans_once_and_a_planning_failure_ends_the_run():
    async def planning(state, config, runtime):
        if state["goal"] == "坏":
            raise dag.PlanningFailed("❌ 规划失败", preview="模型的回复为空")
        return {"plan": {"goal": state["goal"]}}

    planner = dag.make_planner(planning)
    assert await planner({"goal": "好"}, {}, None) == {"plan": {"goal": "好"}}
    assert await planner({"goal": "坏"}, {}, None) == {"outcome": "❌ 规划失败", "status": "failed", "error": "模型的回复为空"}
    assert dag.PlanningFailed("❌").update() == {"outcome": "❌", "status": "failed"}  # no preview: error untouched
    assert await planner({"goal": "坏", "plan": {"goal": "坏"}}, {}, None) == {}  # resumed after planning
    assert await planner({"goal": "坏", "outcome": "❌ 规划失败"}, {}, None) == {}  # resumed after it failed
