"""The dependency graph Plan and Team both run (reference s.4 and s.5), and the three nodes
around it that both graphs share: the planner, the scheduler and the collector.

A mode describes how it keeps its graph in its state with a ``Dag``: where its units are (each
with an ``id`` and ``dependencies``, dependencies first), how a unit's status is read (Plan keeps
it on its tasks, ``PENDING`` ..., Team in its step records, ``pending`` ...), what a pending, a
completed and a failed unit are called, how many units run at once, and which ones are running.
The rules are here once:

- ``ready``: the pending units whose dependencies all completed, in order; ``next_wave`` is the
  first ``max_wave`` of them.
- ``dependents``: every unit that depends on one, directly or not.
- ``Progress``: how much of the graph completed (Plan re-plans a failure only below half).
- ``make_schedule``: the node that picks the next wave and hands it to the mode, which marks
  it running and announces it.
- ``make_collect``: the node that hands the mode the wave's results in unit order, whatever order
  they finished in (a unit without one failed), and merges what every unit shares with the run.
- ``make_planner``: the node that makes the plan once per run: a mode's planning returns the
  update that stores it, or raises ``PlanningFailed``, which ends the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generic, Iterable, Mapping, Sequence, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from paicli.nodes.core.state import RunContext, run_context
from paicli.nodes.unit import UnitInput

StatusOf = Callable[[str], str]
Update = dict[str, Any]
S = TypeVar("S", bound=Mapping[str, Any])  # the mode's state: PlanState, TeamState


def ready(units: Sequence[Any], status_of: StatusOf, *, pending: str, completed: str) -> list[Any]:
    """The ``pending`` units of ``units`` whose dependencies are all ``completed``, in order."""
    return [u for u in units if status_of(u["id"]) == pending
            and all(status_of(d) == completed for d in u["dependencies"])]


def dependents(units: Sequence[Any], unit_id: str) -> list[str]:
    """Every unit that depends on ``unit_id``, directly or not, in the order of ``units``
    (which lists dependencies first)."""
    found = {unit_id}
    for u in units:
        if found & set(u["dependencies"]):
            found.add(u["id"])
    return [u["id"] for u in units if u["id"] in found and u["id"] != unit_id]


@dataclass(frozen=True)
class Progress:
    completed: int
    total: int

    @property
    def fraction(self) -> float:
        """Completed over total; 1.0 for an empty graph."""
        return self.completed / self.total if self.total else 1.0


def progress(units: Sequence[Any], status_of: StatusOf, *, completed: str) -> Progress:
    return Progress(sum(status_of(u["id"]) == completed for u in units), len(units))


@dataclass(frozen=True)
class Dag(Generic[S]):
    """How a mode keeps its graph in its state ``S``: all that differs between Plan and Team."""

    units: Callable[[S], Sequence[Any]]  # every unit, dependencies first
    status_of: Callable[[S], StatusOf]  # the reader of a unit's status in that state
    running: Callable[[S], Iterable[str]]  # the ids of the wave that ran
    pending: str
    completed: str
    failed: str
    max_wave: int  # units at once
    no_result: str  # the failure text of a unit that returned no result


def next_wave(dag: Dag[S], state: S) -> list[Any]:
    """The ready units of ``state``, at most ``max_wave``, in order (the rest wait)."""
    return ready(dag.units(state), dag.status_of(state), pending=dag.pending, completed=dag.completed)[:dag.max_wave]


@dataclass(frozen=True)
class Finished:
    """One unit of the wave that ran, with its result (``graphs/unit.py``)."""

    id: str
    status: str  # the Dag's completed or failed
    text: str
    result: dict[str, Any]  # all of it: "ok", "text", "trusted_urls", Team's "retries"

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))


def finished(dag: Dag[S], state: S) -> list[Finished]:
    """The running wave's results in unit order, whatever order they finished in."""
    results, running = state.get("results") or {}, set(dag.running(state))
    out = []
    for u in dag.units(state):
        if u["id"] in running:
            r = results.get(u["id"]) or {"ok": False, "text": dag.no_result}
            out.append(Finished(u["id"], dag.completed if r.get("ok") else dag.failed, str(r.get("text") or ""), r))
    return out


def make_schedule(dag: Dag[S], start: Callable[[S, list[Any]], Update]):
    """The scheduler node: ``start(state, wave)`` marks the next wave running and announces it
    (an empty wave: nothing is ready, the graph goes on to its final text)."""

    async def schedule(state: S) -> Update:
        return start(state, next_wave(dag, state))

    return schedule


def make_collect(dag: Dag[S], apply: Callable[[S, list[Finished], RunContext], Update]):
    """The collector node: ``apply(state, finished, context)`` records the wave's results and
    decides what follows; the results are then cleared and what the units approved and read is
    merged into the run's."""

    async def collect(state: S, runtime: Runtime[RunContext]) -> Update:
        update = apply(state, finished(dag, state), run_context(runtime))
        return {**update, **collected(state, state.get("results") or {})}

    return collect


def collected(state: Any, results: dict[str, Any]) -> Update:
    """The shared part of a ``collect`` update (``results``: the finished units' results by id)."""
    done = list(results.values())
    return {"results": None, "approved_all": _merged(state, done, "approved_all"),
            "external_sources": _merged(state, done, "external_sources")}


def _merged(state: Any, results: list[dict[str, Any]], key: str) -> list[str]:
    found = list(state.get(key) or [])
    for r in results:
        found += [x for x in r.get(key) or [] if x not in found]
    return found


def unit_payload(state: Any, unit_id: str, brief: str, trusted_urls: list[str]) -> UnitInput:
    """What a unit is sent (``Send``): its brief, and from the run the user's text (the authority
    of its turn policy) and what the run approved and read so far."""
    return {"unit_id": unit_id, "unit_request": state.get("submitted", ""), "unit_input": brief,
            "trusted_urls": trusted_urls, "approved_all": list(state.get("approved_all") or []),
            "external_sources": list(state.get("external_sources") or [])}


class PlanningFailed(Exception):
    """Planning ends the run: ``outcome`` is its final text; ``preview`` (issue 26), when given,
    is what the model sent, which the CLI shows on stderr."""

    def __init__(self, outcome: str, preview: str | None = None):
        super().__init__(outcome)
        self.outcome, self.preview = outcome, preview

    def update(self) -> Update:
        return {"outcome": self.outcome, "status": "failed", **({} if self.preview is None else {"error": self.preview})}


Planning = Callable[[S, RunnableConfig, Runtime[RunContext]], Awaitable[Update]]


def make_planner(planning: Planning):
    """The planner node: ``planning(state, config, runtime)`` returns the update that stores the
    plan (and announces it), or raises ``PlanningFailed``. A run resumed after planning (a plan
    made, or the run ended) does not plan again."""

    async def planner(state: S, config: RunnableConfig, runtime: Runtime[RunContext]) -> Update:
        if state.get("plan") or state.get("outcome"):
            return {}
        try:
            return await planning(state, config, runtime)
        except PlanningFailed as failed:
            return failed.update()

    return planner
