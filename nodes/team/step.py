"""worker_done, review and retry: a step's attempts around its worker's loop (reference s.5
runStep). The decisions are ``paicli.nodes.team.attempts``; these nodes only apply them.

The worker keeps its history for a retry (the rejection and its feedback are appended as a new
brief); a new step is a new unit, so nothing of one step's attempts reaches another.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer

from paicli.memory.context.rounds import internal
from paicli.nodes.model.response import reply_preview
from paicli.nodes.team import texts
from paicli.nodes.team.attempts import Attempts, after_review, after_worker
from paicli.nodes.team.inputs import TeamInputs
from paicli.nodes.team.members import reply_text
from paicli.nodes.team.schedule import COMPLETED
from paicli.nodes.team.state import StepState
from paicli.nodes.team.verdict import parse_verdict
from paicli.nodes.unit import UNIT_INPUT

MODE = "team"


def attempts(state: StepState) -> Attempts:
    saved = state.get("progress")
    return Attempts(**saved) if saved else Attempts(state["step"]["id"])


def _apply(p: Attempts, lines: list[str], nxt: str) -> dict[str, Any]:
    notify = get_stream_writer()
    for line in lines:
        notify({"notice": line.rstrip("\n")})
    return {"progress": asdict(p), "next": nxt}


async def worker_done(state: StepState) -> dict[str, Any]:
    result = state.get("result") or {"ok": False, "text": texts.EMPTY_RESULT}
    return _apply(*after_worker(attempts(state), bool(result.get("ok")), str(result.get("text") or "")))


def make_verdict(reviewer: Any, inputs: TeamInputs, member_config: Any):
    """``reviewer``: the compiled member graph; ``member_config(config, actor)`` labels its run."""

    async def review(state: StepState, config: RunnableConfig) -> dict[str, Any]:
        p, step = attempts(state), state["step"]
        get_stream_writer()({"notice": texts.reviewing(state["reviewer"], step["id"])})
        out = await reviewer.ainvoke({"messages": [HumanMessage(inputs.review(step, p.accepted))]},
                                     member_config(config, state["reviewer"]))
        reply = "" if out.get("error") else reply_text(out)
        verdict = None if out.get("error") else parse_verdict(reply)
        if verdict is not None and verdict.unreadable:  # issue 26: show what the reviewer sent
            get_stream_writer()({"notice": texts.unreadable_verdict(state["reviewer"], step["id"], reply_preview(reply))})
        return _apply(*after_review(p, verdict))

    return review


def make_retry(inputs: TeamInputs):
    async def retry(state: StepState) -> dict[str, Any]:
        p = attempts(state)
        brief = inputs.retry(state["context"], state["step"], p.feedback)
        return {"messages": [internal(brief, UNIT_INPUT)], "error": None, "result": None}

    return retry


async def step_finish(state: StepState) -> dict[str, Any]:
    p = attempts(state)
    ok = p.status == COMPLETED
    # the URLs the worker's web_search grounded, over all its attempts: its dependents may fetch them
    urls = list((state.get("result") or {}).get("trusted_urls") or [])
    return {"result": {"ok": ok, "text": p.accepted if ok else p.failure, "retries": p.retries, "trusted_urls": urls}}


def after_step_node(state: StepState) -> str:
    return {"review": "review", "retry": "retry"}.get(state.get("next", ""), "step_finish")
