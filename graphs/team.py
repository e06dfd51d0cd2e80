"""The Team graph (reference s.5; docs/architecture.md, "The Team graph"):

    START → team_start → plan_team ─► schedule ─► step × ≤2 (Send) ─► collect ─┐
                             │            │ nothing ready                      │
                             │            ▼                                    │
                             └──────► finish ─► (✅) extract_facts → END       │
                                          ▲ (collect → schedule: the next wave)┘

A step is one execution unit (``graphs/unit.py``: ``add_unit`` wires it, ``make_unit_node`` runs
it, as for a Plan task) with review around its loop:

    unit_start → load_context → (agent loop) → unit_finish → worker_done ─► review ─► step_finish
                      ▲                                           │            │
                      └────────────────── retry ◄─────────────────┴────────────┘

The planner and each reviewer are member calls without tools, each a tiny graph run labelled
with its actor in the ledger. Only workers have tools.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from paicli.graphs.builder import GraphBuilder
from paicli.graphs.start import link_start
from paicli.graphs.unit import add_unit, make_unit_node, unit_config
from paicli.graphs.wave import fan_out
from paicli.nodes.core.state import Deps, MessagesInput, RunContext
from paicli.nodes.dag import make_planner
from paicli.nodes.extract_facts import make_extract_facts
from paicli.nodes.team import texts
from paicli.nodes.team.inputs import TeamInputs
from paicli.nodes.team.members import MemberState, make_ask
from paicli.nodes.team.run import collect, finish, make_planning, schedule, step_payloads, team_start
from paicli.nodes.team.state import StepInput, StepState, TeamState
from paicli.nodes.team.step import MODE, after_step_node, make_retry, make_verdict, step_finish, worker_done
from paicli.nodes.unit import UnitOutput

NO_RESULT = "步骤没有结果"


def member_config(config: RunnableConfig, actor: str) -> RunnableConfig:
    return unit_config(config, MODE, actor)


def build_member(deps: Deps, mode: str):
    builder = GraphBuilder(MemberState, context_schema=RunContext)
    builder.add_node("ask", make_ask(deps, mode))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(name=mode)


def build_step(deps: Deps, inputs: TeamInputs) -> StateGraph:
    """A step: one execution unit (``graphs/unit.py``) with its review after the loop."""
    builder = GraphBuilder(StepState, input_schema=StepInput, output_schema=UnitOutput, context_schema=RunContext)
    add_unit(builder, deps, finish_to="worker_done")
    builder.add_node("worker_done", worker_done)
    builder.add_node("review", make_verdict(build_member(deps, "team-reviewer"), inputs, member_config))
    builder.add_node("retry", make_retry(inputs))
    builder.add_node("step_finish", step_finish)
    builder.add_conditional_edges("worker_done", after_step_node, ["review", "retry", "step_finish"])
    builder.add_conditional_edges("review", after_step_node, ["retry", "step_finish"])
    builder.add_edge("retry", "load_context")
    builder.add_edge("step_finish", END)
    return builder


def step_failed(unit_id: str, text: str) -> None:
    get_stream_writer()({"notice": texts.worker_failed(unit_id, text).rstrip()})


def make_step_node(deps: Deps, inputs: TeamInputs):
    """The parent's node for ``Send("step", payload)``: the step's unit under its worker's actor."""
    return make_unit_node(deps, mode=MODE, actor=lambda payload: payload["worker"], unit=build_step(deps, inputs),
                          name="step", no_result=NO_RESULT, failed=step_failed)


def build_team(deps: Deps, *, context_schema: type[RunContext] = RunContext) -> StateGraph:
    inputs = TeamInputs()

    def after_planning(state: TeamState) -> str:
        return "finish" if state.get("outcome") else "schedule"

    def after_schedule(state: TeamState) -> Any:
        payloads = step_payloads(state, inputs)
        return fan_out("step", payloads) if payloads else "finish"

    def after_finish(state: TeamState) -> str:
        return "extract_facts" if state.get("status") == "completed" else END

    builder = GraphBuilder(TeamState, input_schema=MessagesInput, context_schema=context_schema)
    builder.add_node("team_start", team_start)
    builder.add_node("plan_team", make_planner(make_planning(deps, build_member(deps, "team-planner"), inputs,
                                                           member_config)))
    builder.add_node("schedule", schedule)
    builder.add_node("step", make_step_node(deps, inputs))
    builder.add_node("collect", collect)
    builder.add_node("finish", finish)
    builder.add_node("extract_facts", make_extract_facts(deps))
    builder.add_edge(START, "team_start")
    link_start(builder, deps, MODE, "team_start", "plan_team")
    builder.add_conditional_edges("plan_team", after_planning, ["schedule", "finish"])
    builder.add_conditional_edges("schedule", after_schedule, ["step", "finish"])
    builder.add_edge("step", "collect")
    builder.add_edge("collect", "schedule")
    builder.add_conditional_edges("finish", after_finish, ["extract_facts", END])
    builder.add_edge("extract_facts", END)
    return builder


def build_graph(deps: Deps, checkpointer: BaseCheckpointSaver | None = None, store: BaseStore | None = None):
    return build_team(deps).compile(checkpointer=checkpointer, store=store, name=MODE)
