"""End-to-end fixtures: `paicli` talking HTTP to a FakeOpenAIServer.

Each test gets its own project directory and PAICLI_HOME, and an environment with nothing
inherited that could point paicli (or LangSmith) at a real service.

`run_paicli` runs `paicli.__main__.main(argv)` in this interpreter (tests/support/inprocess.py),
with the child's environment, working directory and streams; a test marked
`@pytest.mark.process` (it needs a real process boundary: signals, kill -9, SIGPIPE, a pty,
Studio, several processes) gets `python -m paicli` as a real subprocess from the same fixture.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.inprocess import run_in_process
from tests.support.pty_terminal import PtyTerminal
from tests.support.openai_server import FakeOpenAIServer
from tests.support.waiting import patience

# Variables that would change which endpoint, key or tracing a child process uses.
INHERITED_PREFIXES = ("PAICLI_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_")
PROVIDER_KEYS = ("ZHIPUAI_API_KEY", "DEEPSEEK_API_KEY", "MOONSHOT_API_KEY")
RUN_TIMEOUT = 30  # seconds on an idle machine; a hung child fails the test instead of the suite


def run_timeout(seconds: float = RUN_TIMEOUT) -> float:
    """``seconds`` stretched by the machine's load now (``tests.support.waiting.patience``): the
    README's command passes beside a second full run of it (issue 36 item 6)."""
    return patience(seconds)


def clean_environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(INHERITED_PREFIXES) and k not in PROVIDER_KEYS}


def closed_port() -> int:
    """A port on 127.0.0.1 nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def paicli_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """The child's HOME: empty, so nothing in the developer's own dotfiles changes a test."""
    home = tmp_path / "user-home"
    home.mkdir()
    return home


@pytest.fixture
def paicli_env(paicli_home: Path, user_home: Path) -> Callable[..., dict[str, str]]:
    """`paicli_env(base_url, **overrides)`: the child's environment; an override of None unsets."""

    def build(base_url: str, **overrides: str | None) -> dict[str, str]:
        env = clean_environ()
        env.update(HOME=str(user_home), PAICLI_HOME=str(paicli_home), PAICLI_API_KEY="test-key",
                   PAICLI_BASE_URL=base_url, PAICLI_MODEL="m", LANGSMITH_TRACING="false",
                   # Off unless a test is about it: an extraction or search-terms call would
                   # take a scripted reply.
                   PAICLI_MEMORY_AUTO_EXTRACT_ENABLED="false", PAICLI_MEMORY_SEARCH_TERMS_ENABLED="false")
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    return build


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """An empty-script server; tests set `server.script` before running paicli."""
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def run_paicli(request: pytest.FixtureRequest, project: Path, paicli_env, server: FakeOpenAIServer):
    """`run_paicli(*args, base_url=..., env=..., stdin=..., timeout=...)` → CompletedProcess (text):
    in process, or as a subprocess when the test is marked `process`."""
    in_process = (request.node.get_closest_marker("process") is None
                  and not request.config.getoption("--subprocess-cli"))

    def run(*args: str, base_url: str | None = None, env: dict[str, str | None] | None = None,
            stdin: int = subprocess.DEVNULL, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
        timeout = run_timeout(RUN_TIMEOUT if timeout is None else timeout)
        child_env = paicli_env(base_url or server.base_url, **(env or {}))
        if in_process:
            return run_in_process(list(args), env=child_env, cwd=project, stdin=stdin, timeout=timeout)
        return subprocess.run([sys.executable, "-m", "paicli", *args], cwd=project, env=child_env,
                              stdin=stdin, capture_output=True, text=True, encoding="utf-8",
                              timeout=timeout)

    return run


@pytest.fixture
def start_repl(project: Path, paicli_env, server: FakeOpenAIServer):
    """`start_repl(**env)` → the REPL on a pseudo-terminal in the project, against the fake
    server, with ``env`` added to the child's environment; closed when the test ends."""
    terminals: list[PtyTerminal] = []

    def start(**env: str) -> PtyTerminal:
        child_env = paicli_env(server.base_url, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", **env)
        terminals.append(PtyTerminal([sys.executable, "-m", "paicli"], cwd=str(project), env=child_env))
        return terminals[-1]

    yield start
    for terminal in terminals:
        terminal.close()


def as_langchain(messages: list[dict]) -> list:
    """An OpenAI request's messages as LangChain messages (system prompt included)."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out = []
    for m in messages:
        if m["role"] == "system":
            out.append(SystemMessage(m["content"]))
        elif m["role"] == "user":
            out.append(HumanMessage(m["content"] or ""))
        elif m["role"] == "assistant":
            calls = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"] or "{}"),
                      "id": c["id"]} for c in m.get("tool_calls") or []]
            out.append(AIMessage(m.get("content") or "", tool_calls=calls))
        elif m["role"] == "tool":
            out.append(ToolMessage(m["content"], tool_call_id=m["tool_call_id"]))
    return out
