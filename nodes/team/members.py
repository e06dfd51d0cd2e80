"""The team members that answer without tools: the planner and the reviewer (reference s.5).

Each call is its own small graph run (``graphs/team.py``), so its request and reply are
checkpointed in the session's ledger under the member's actor like any other unit's messages.
The request carries no tools: only workers act (reference s.5 "Only WORKER requests carry
tools"). The system prompt is the member's mode file with the project's PAI.md; the memories
relevant to the goal ride with the planner's request, as in every mode (Q16).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, Optional

from langchain_core.messages import AIMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from paicli.memory.tokens import text_of
from paicli.nodes.core.state import Deps, RunContext, run_context
from paicli.prompts import PromptSources, assemble_system_prompt
from paicli.prompts.pai_md import load_project_context

MEMBER_FAILED = "LLM 调用失败: {error}"  # reference s.5 SubAgent loop: an IOException's message


class MemberState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    error: Optional[str]


def member_system(deps: Deps, ctx: RunContext, mode: str) -> SystemMessage:
    root = Path(ctx.project_root)
    return SystemMessage(assemble_system_prompt(
        mode=mode, approval=ctx.approval, now=deps.clock(), sources=PromptSources.for_project(deps.prompt_home, root),
        project_context=load_project_context(root, deps.prompt_home), web_search="web_search" in deps.tools))


def make_ask(deps: Deps, mode: str):
    """The node: one model call without tools on the member's messages."""

    async def ask(state: MemberState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = run_context(runtime)
        system = await asyncio.to_thread(member_system, deps, ctx, mode)
        try:
            reply = await deps.model.ainvoke([system, *state["messages"]])
        except Exception as exc:  # the provider failed for good: the caller decides what it means
            return {"error": MEMBER_FAILED.format(error=_one_line(exc))}
        if reasoning := reply.additional_kwargs.get("reasoning_content"):  # `🧠 规划思考|审查思考` (reference s.5)
            get_stream_writer()({"reasoning": str(reasoning), "role": mode})
        return {"messages": [reply]}

    return ask


def reply_text(state: dict[str, Any]) -> str:
    messages = list(state.get("messages") or [])
    last = messages[-1] if messages else None
    return text_of(last) if isinstance(last, AIMessage) else ""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
