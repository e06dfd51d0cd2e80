"""``/context``'s stable prefix: how much of the next request repeats the last one (issue 13).

The last request is rebuilt from the checkpoint ``call_model`` last ran on (its messages and
PAI.md, the system prompt of that day), so it is right in a new process too (``paicli -p
/context``). The next request is the conversation now, with the PAI.md files as they are on
disk now. A request that is not rebuilt exactly: the overflow retry's compacted one, or one made
before a prompt file or the approval level changed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from paicli.memory.context.prefix_cache import PrefixShare, prefix_share
from paicli.nodes.core.request import assemble_request
from paicli.nodes.core.state import Deps, RunContext
from paicli.nodes.load_context import project_context
from paicli.nodes.model.call_model import system_prompt


async def last_request(graph: Any, config: dict, deps: Deps, ctx: RunContext) -> list[BaseMessage] | None:
    """The messages of the thread's last model request, or None before the first one."""
    async for snapshot in graph.aget_state_history(config):
        if tuple(snapshot.next) == ("call_model",):
            values = snapshot.values
            now = deps.clock()
            if snapshot.created_at:
                now = datetime.fromisoformat(snapshot.created_at).astimezone(now.tzinfo)
            system = SystemMessage(system_prompt(deps, ctx, now, values.get("project_context", "")))
            return assemble_request(system, list(values.get("messages") or []))
    return None


def next_request(messages: list[BaseMessage], deps: Deps, ctx: RunContext) -> list[BaseMessage]:
    """The next request as far as it is known: the system prompt with PAI.md read now, then the
    conversation (the user's next message and its memories come after)."""
    system = SystemMessage(system_prompt(deps, ctx, deps.clock(), project_context(deps, ctx)))
    return assemble_request(system, messages)


async def stable_prefix(graph: Any, config: dict, deps: Deps, ctx: RunContext,
                        messages: list[BaseMessage]) -> PrefixShare | None:
    previous = await last_request(graph, config, deps, ctx)
    return None if previous is None else prefix_share(previous, next_request(messages, deps, ctx))
