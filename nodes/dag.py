"""The dependency graph Plan and Team both run (reference s.4 and s.5): units with an ``id`` and
``dependencies``, each with a status. Plan keeps the status on its tasks (``PENDING`` ...), Team
in its step records (``pending`` ...), so the status reader and the two status words are passed
in; the rules are here once.

- ``ready``: the pending units whose dependencies all completed, in the order given.
- ``dependents``: every unit that depends on one, directly or not.
- ``Progress``: how much of the graph completed (Plan re-plans a failure only below half).
- ``collected``: what every ``collect`` node returns besides its own bookkeeping: the finished
  units' results taken out of the state, their "approve all" answers and external sources
  merged into the run's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

StatusOf = Callable[[str], str]


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


def collected(state: Any, results: dict[str, Any]) -> dict[str, Any]:
    """The shared part of a ``collect`` update (``results``: the finished units' results by id)."""
    done = list(results.values())
    return {"results": None, "approved_all": _merged(state, done, "approved_all"),
            "external_sources": _merged(state, done, "external_sources")}


def _merged(state: Any, results: list[dict[str, Any]], key: str) -> list[str]:
    found = list(state.get(key) or [])
    for r in results:
        found += [x for x in r.get(key) or [] if x not in found]
    return found
