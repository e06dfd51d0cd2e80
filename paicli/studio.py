"""Graphs for ``langgraph dev`` (langgraph.json), compiled without checkpointer or store:
the server injects its own (a graph compiled with one makes ``langgraph dev`` refuse to start).

They live here rather than in ``graphs/`` because the chat model comes from the user's
settings, and only the ``paicli`` layer reads settings. The project root for tools is the
``project_root`` in the run's context, or the server's working directory.
"""

from __future__ import annotations

from graphs.react import build_react
from nodes.state import Deps
from paicli.models import make_chat_model
from paicli.settings import load_settings

_settings = load_settings()
react = build_react(Deps(model=make_chat_model(_settings), prompt_home=_settings.home))[0].compile(name="react")
