"""Graphs for ``langgraph dev`` (langgraph.json), compiled without checkpointer or store:
the server injects its own (a graph compiled with one makes ``langgraph dev`` refuse to start).

They live here rather than in ``graphs/`` because the chat model comes from the user's
settings, and only the ``paicli`` layer reads settings. The project root for tools is the
``project_root`` in the run's context, or the server's working directory.
"""

from __future__ import annotations

from graphs.react import build_react
from paicli.session import make_deps
from paicli.settings import load_settings

_settings = load_settings()
# Fact extraction runs in the server too (the store is long_term_memory.json, langgraph.json),
# when the user's settings enable it; its notices have no terminal to go to.
react = build_react(make_deps(_settings, auto_extract=_settings.memory.auto_extract))[0].compile(name="react")
