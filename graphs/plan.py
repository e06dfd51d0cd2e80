"""The Plan-and-Execute graph (reference s.4; docs/architecture.md, "The Plan graph"):

    START → plan_start → planner ─► review ─► schedule ─► task × N (Send) ─► collect ─┐
                           ▲  │        │  │        │ nothing ready                      │
                           │  │        │  │        ▼                                    │
                           │  └────────┼──┴──► summary ─► (✅) extract_facts → END      │
                           └───────────┴─ supplement / replan ◄──────────────────────────┘
                                            (collect → schedule: the next wave)

Each task is one execution unit (``graphs/unit.py``): the react graph's agent loop and
context node on a message list of its own, run as a ``Send`` target. ``build_graph`` is what
the CLI compiles (with ``paicli.memory.ledger.namespaced.NamespacedSaver`` over the session's ledger);
``paicli/studio/graphs.py`` compiles it for ``langgraph.json``.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from paicli.graphs.builder import GraphBuilder
from paicli.graphs.start import link_start
from paicli.graphs.unit import make_unit_node
from paicli.graphs.wave import fan_out
from paicli.nodes.core.state import Deps, MessagesInput, RunContext
from paicli.nodes.dag import make_planner, unit_payload
from paicli.nodes.extract_facts import make_extract_facts
from paicli.nodes.plan.execute import collect, schedule
from paicli.nodes.plan.planner import make_planning, plan_start
from paicli.nodes.plan.review import plan_review
from paicli.nodes.plan.state import PlanState
from paicli.nodes.plan.summary import summary
from paicli.nodes.plan.text import DONE, task_input, trusted_urls

MODE = "plan"


def task_payloads(state: PlanState) -> list[dict[str, Any]]:
    plan, by_id = state["plan"], {t["id"]: t for t in state["plan"]["tasks"]}
    return [unit_payload(state, i, task_input(plan, by_id[i]), trusted_urls(plan, by_id[i]))
            for i in state.get("batch") or []]


def after_planner(state: PlanState) -> str:
    return "summary" if state.get("outcome") else "review"


def after_review(state: PlanState) -> str:
    if state.get("outcome"):
        return "summary"
    return "schedule" if state.get("plan") else "planner"


def after_schedule(state: PlanState) -> Any:
    return fan_out("task", task_payloads(state)) if state.get("batch") else "summary"


def after_collect(state: PlanState) -> str:
    return "schedule" if state.get("plan") else "planner"


def after_summary(state: PlanState) -> str:
    return "extract_facts" if state.get("outcome", "").startswith(DONE) else END


def build_plan(deps: Deps, *, context_schema: type[RunContext] = RunContext) -> StateGraph:
    builder = GraphBuilder(PlanState, input_schema=MessagesInput, context_schema=context_schema)
    builder.add_node("plan_start", plan_start)
    builder.add_node("planner", make_planner(make_planning(deps)))
    builder.add_node("review", plan_review)
    builder.add_node("schedule", schedule)
    builder.add_node("task", make_unit_node(deps, mode=MODE))
    builder.add_node("collect", collect)
    builder.add_node("summary", summary)
    builder.add_node("extract_facts", make_extract_facts(deps))
    builder.add_edge(START, "plan_start")
    link_start(builder, deps, MODE, "plan_start", "planner")
    builder.add_conditional_edges("planner", after_planner, ["review", "summary"])
    builder.add_conditional_edges("review", after_review, ["schedule", "planner", "summary"])
    builder.add_conditional_edges("schedule", after_schedule, ["task", "summary"])
    builder.add_edge("task", "collect")
    builder.add_conditional_edges("collect", after_collect, ["schedule", "planner"])
    builder.add_conditional_edges("summary", after_summary, ["extract_facts", END])
    builder.add_edge("extract_facts", END)
    return builder


def build_graph(deps: Deps, checkpointer: BaseCheckpointSaver | None = None, store: BaseStore | None = None):
    return build_plan(deps).compile(checkpointer=checkpointer, store=store, name=MODE)
