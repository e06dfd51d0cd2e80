"""The team plan (reference s.5 item 3): parse the planner's reply into steps, or reject it whole.

Any rule broken rejects the entire plan before a worker runs: a plan with one bad edge is not
half-executed. Steps are renumbered ``step_<k>`` in the order given, and their dependencies
follow the renumbering, so later texts never show an id the model made up.
"""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter
from typing import Any

from typing_extensions import TypedDict

from paicli.nodes.team.reply import ReplyError, parse_object

DEFAULT_TYPE = "COMMAND"  # reference s.5: the type is optional and defaults to COMMAND
# reference s.5 item 3 gives the first text; the others follow the Plan parser's (s.4) wording.
NO_STEPS = "计划必须包含非空 steps 数组"
BAD_ID = "计划步骤必须具有非空字符串 id"
DUPLICATE_ID = "计划中存在重复步骤 id：{id}"
BAD_DESCRIPTION = "计划步骤 description 必须是字符串"
BAD_TYPE = "计划步骤 type 必须是字符串"
BAD_DEPENDENCIES = "计划 dependencies 必须是步骤 id 数组"
UNKNOWN_DEPENDENCY = "计划依赖必须引用已声明的步骤 id：{id}"
CYCLE = "计划中存在循环依赖"


class TeamStep(TypedDict):
    id: str
    description: str
    type: str
    dependencies: list[str]


class TeamPlan(TypedDict):
    summary: str
    steps: list[TeamStep]


class PlanError(ValueError):
    """The plan is rejected; the message names the broken rule."""


def parse_team_plan(reply: str) -> TeamPlan:
    try:
        document = parse_object(reply)
    except ReplyError as error:
        raise PlanError(str(error)) from None
    raw = _raw_steps(document)
    renamed = _renumber(raw)
    steps = [_step(item, renamed[_id(item)], renamed) for item in raw]
    _reject_cycles(steps)
    summary = document.get("summary")
    return TeamPlan(summary=summary.strip() if isinstance(summary, str) else "", steps=steps)


def _raw_steps(document: dict[str, Any]) -> list[Any]:
    for key in ("steps", "tasks"):  # `tasks`: plans written for the older prompt
        value = document.get(key)
        if isinstance(value, list) and value:
            return value
    raise PlanError(NO_STEPS)


def _id(item: Any) -> str:
    value = item.get("id") if isinstance(item, dict) else None
    if not isinstance(value, str) or not value.strip():
        raise PlanError(BAD_ID)
    return value.strip()


def _renumber(raw: list[Any]) -> dict[str, str]:
    renamed: dict[str, str] = {}
    for k, item in enumerate(raw, start=1):
        original = _id(item)
        if original in renamed:
            raise PlanError(DUPLICATE_ID.format(id=_shown(original)))
        renamed[original] = f"step_{k}"
    return renamed


def _step(item: dict[str, Any], new_id: str, renamed: dict[str, str]) -> TeamStep:
    return TeamStep(id=new_id, description=_text(item, "description", "", BAD_DESCRIPTION),
                    type=_text(item, "type", DEFAULT_TYPE, BAD_TYPE).upper() or DEFAULT_TYPE,
                    dependencies=_dependencies(item.get("dependencies"), renamed))


def _text(item: dict[str, Any], key: str, default: str, error: str) -> str:
    value = item.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise PlanError(error)
    return value.strip()


def _dependencies(value: Any, renamed: dict[str, str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        raise PlanError(BAD_DEPENDENCIES)
    found: list[str] = []
    for original in value:
        if original.strip() not in renamed:
            raise PlanError(UNKNOWN_DEPENDENCY.format(id=_shown(original.strip())))
        if renamed[original.strip()] not in found:  # reference s.5: dependencies are de-duplicated
            found.append(renamed[original.strip()])
    return found


def _shown(model_text: str) -> str:
    """A model-written id as it appears in an error: one line, bounded."""
    flat = " ".join(model_text.split())
    return flat if len(flat) <= 60 else flat[:57] + "..."


def _reject_cycles(steps: list[TeamStep]) -> None:
    try:
        TopologicalSorter({s["id"]: s["dependencies"] for s in steps}).prepare()
    except CycleError:
        raise PlanError(CYCLE) from None
