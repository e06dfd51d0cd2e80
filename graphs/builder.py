"""The ``StateGraph`` every paicli graph is built on: its nodes run from ``invoke`` as from ``ainvoke``.

paicli's nodes and routers are coroutines (they stream the model, run tools in worker threads,
wait on locks), and LangGraph runs a coroutine only from its async API: ``graph.invoke`` on a plain
``StateGraph`` stops at the first node with ``No synchronous function provided``. ``GraphBuilder``
gives each coroutine node and router a synchronous twin that runs the same coroutine to its end,
so an embedding program can call ``invoke``/``stream`` (with a checkpointer that has only sync
methods, such as ``SqliteSaver``) as well as ``ainvoke``/``astream``. From the async API nothing
changes: the coroutine runs on the caller's event loop.

The twin runs the coroutine on one event loop of paicli's own, in a daemon thread, with the
caller's context (LangGraph's config, which ``interrupt`` and the stream writer read), and blocks
until it is done. One loop for every node, so work a node leaves running (fact extraction in
``Deps.background``) carries on between nodes; it is not awaited when ``invoke`` returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import threading
from collections.abc import Coroutine
from typing import Any, Callable, get_type_hints

# LangGraph's own node wrapper: a sync and an async function, with its injection of ``runtime``,
# ``config`` and the writer by parameter name (langgraph 1.2, pinned in pyproject.toml).
from langgraph._internal._runnable import RunnableCallable
from langgraph.graph import StateGraph

_LOOP: asyncio.AbstractEventLoop | None = None
_THREAD: threading.Thread | None = None
_START = threading.Lock()


def _loop() -> asyncio.AbstractEventLoop:
    global _LOOP, _THREAD
    with _START:
        if _LOOP is None or _THREAD is None or not _THREAD.is_alive():
            _LOOP = asyncio.new_event_loop()
            _THREAD = threading.Thread(target=_LOOP.run_forever, name="paicli-sync-nodes", daemon=True)
            _THREAD.start()
        return _LOOP


def run_to_end(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """The coroutine's result (or its exception, a ``GraphInterrupt`` too), in this thread's context."""
    if threading.current_thread() is _THREAD:
        coroutine.close()
        raise RuntimeError("a paicli graph was run with invoke() from inside one of its own nodes; use ainvoke()")
    future = contextvars.copy_context().run(asyncio.run_coroutine_threadsafe, coroutine, _loop())
    return future.result()


def _coroutine_function(thing: Any) -> Callable[..., Any] | None:
    """``thing`` itself, or its ``__call__``, when it is a coroutine function (what LangGraph runs async)."""
    if inspect.iscoroutinefunction(thing):
        return thing
    call = getattr(thing, "__call__", None)
    return thing if call is not None and inspect.iscoroutinefunction(call) else None


def both(action: Callable[..., Any], name: str | None) -> RunnableCallable:
    """``action`` for the async API, and a twin that runs it to its end for the sync one."""

    @functools.wraps(action)
    def run(*args: Any, **kwargs: Any) -> Any:
        return run_to_end(action(*args, **kwargs))

    return RunnableCallable(run, action, name=name, trace=name is None)


def input_schema_of(action: Callable[..., Any]) -> type | None:
    """The state a node reads, as LangGraph infers it from a plain function's first parameter
    (``UnitInput`` for a unit): it cannot see through the twin, so it is passed on explicitly."""
    function = action if inspect.isfunction(action) or inspect.ismethod(action) else getattr(action, "__call__", action)
    try:
        hints = get_type_hints(function)
        first = next(iter(inspect.signature(function).parameters))
    except (NameError, TypeError, StopIteration, ValueError):
        return None
    hint = hints.get(first)
    try:
        return hint if isinstance(hint, type) and get_type_hints(hint) else None
    except TypeError:
        return None


class GraphBuilder(StateGraph):
    """``StateGraph`` whose coroutine nodes and routers also run from ``invoke``."""

    def add_node(self, node: Any, action: Any = None, **kwargs: Any) -> GraphBuilder:
        if action is not None and _coroutine_function(action) is not None:
            if kwargs.get("input_schema") is None:
                kwargs["input_schema"] = input_schema_of(action)
            action = both(action, node if isinstance(node, str) else None)
        return super().add_node(node, action, **kwargs)

    def add_conditional_edges(self, source: str, path: Any, path_map: Any = None) -> GraphBuilder:
        if _coroutine_function(path) is not None:
            path = both(path, None)
        return super().add_conditional_edges(source, path, path_map)
