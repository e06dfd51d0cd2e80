"""The modes, one row each (issue 25): every surface that names a mode reads :data:`MODES`.

From a :class:`ModeSpec` come ``--mode``'s choices and help (``paicli/__main__.py``), its slash
command, ``/help`` line, completion and "next input" text (``paicli/commands/table.py``), the banner and
cancel line a run prints (``paicli/repl.py``, ``paicli/oneshot.py``), the graph ``paicli studio``
serves (``paicli/studio/graphs.py``, ``paicli/studio/command.write_config`` and the repository's
``langgraph.json``, which a test keeps equal), which runs ``/continue`` looks for
(``paicli/run/comeback.py``) and the session's runners (``paicli/run/session.py``).

The prompt the agent loop gets in a mode is a fact of the lower layer (the nodes read it, and they
cannot import this module): ``paicli.prompts.LOOP_PROMPTS`` maps the mode's name to its prompt in
``paicli.prompts.MODE_FILES``; :attr:`ModeSpec.prompt` reads it from there.

Only the standard library is imported here, so ``paicli --help`` stays instant; a mode's graph
module is imported when its graph is first built.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModeSpec:
    """A mode. ``name`` is its ``--mode`` value, ``RunContext.mode``, the ledger's ``mode`` and
    its Studio graph id."""

    name: str
    graph: str  # "module:function" -> (deps, *, context_schema=..., **studio) -> StateGraph
    actor: str  # the actor of the run's own (non-unit) ledger lines
    summary: str  # its words in --help
    # Its slash command ``/<name> [任务]``; None: none (ReAct, the default, has no command).
    command_help: str | None = None
    next_input: str = ""  # reference s.1 item 8: ``/<name>`` without a task
    dropped: str = ""  # reference s.1 item 8: ESC (or /cancel) at the next prompt drops it
    banner: str = ""  # reference s.1 item 5: what a run prints when it starts
    cancelled: str = ""  # reference s.7: what Ctrl-C prints
    command_doc: tuple[str, str] = ("", "")  # its command's row in the README: (arguments, what it does)
    studio_options: tuple[tuple[str, Any], ...] = ()  # extra builder arguments for the Studio graph

    @property
    def flag(self) -> str:
        return self.name

    @property
    def studio_graph(self) -> str:
        return self.name

    @property
    def command(self) -> str | None:
        return f"/{self.name}" if self.command_help is not None else None

    @property
    def runs_apart(self) -> bool:
        """A graph of its own run beside the conversation (``paicli.run.mode_run``); ReAct is the conversation."""
        return self.name != DEFAULT_MODE

    @property
    def prompt(self) -> str:
        """Its agent loop's prompt: a key of ``paicli.prompts.MODE_FILES``."""
        from paicli.prompts import loop_prompt

        return loop_prompt(self.name)

    def build(self, deps: Any, **options: Any) -> Any:
        """Its ``StateGraph`` (not compiled)."""
        module, _, function = self.graph.partition(":")
        return getattr(importlib.import_module(module), function)(deps, **options)


DEFAULT_MODE = "react"
MODES: tuple[ModeSpec, ...] = (
    ModeSpec(name="react", graph="paicli.graphs.react:build_react_graph", actor="react",
             summary="react（默认）：一个 Agent 边用工具边回答",
             cancelled="⏹️ 已取消当前任务。",
             studio_options=(("raise_on_error", True),)),
    ModeSpec(name="plan", graph="paicli.graphs.plan:build_plan", actor="planner",
             summary="plan：先为任务制定计划，再执行各步骤（REPL 中有计划审查）",
             command_help="用 Plan-and-Execute 模式执行任务；不带任务时下一条输入使用该模式",
             next_input="📋 下一条任务将使用 Plan-and-Execute 模式，输入任务前按 ESC 可取消，执行完成后自动回到默认 ReAct。",
             dropped="↩️ 已取消待执行的 Plan-and-Execute，回到默认 ReAct。",
             banner="📋 使用 Plan-and-Execute 模式", cancelled="⏹️ 已取消当前计划执行。",
             command_doc=("[task]", "plan the task and run it with Plan-and-Execute; without a task, the next input "
                          "is planned")),
    ModeSpec(name="team", graph="paicli.graphs.team:build_team", actor="orchestrator",
             summary="team：规划者、执行者和检查者分工完成任务",
             command_help="用多 Agent 协作模式（规划者 + 执行者 + 检查者）执行任务；不带任务时下一条输入使用该模式",
             next_input="👥 下一条任务将使用多 Agent 协作模式（规划者 + 执行者 + 检查者），输入任务前按 ESC 可取消，"
             "执行完成后自动回到默认 ReAct。",
             dropped="↩️ 已取消待执行的多 Agent 协作，回到默认 ReAct。",
             banner="👥 使用多 Agent 协作模式", cancelled="⏹️ 已取消当前多 Agent 任务。",
             command_doc=("[goal]", "run the goal in Team mode (planner, two workers, reviewer); alone: the next "
                          "input runs in Team mode")),
)
MODE_SPECS: dict[str, ModeSpec] = {spec.name: spec for spec in MODES}
RUN_MODES = tuple(spec.name for spec in MODES if spec.runs_apart)  # the modes paicli.run.mode_run runs
COMMANDS = {spec.command: spec for spec in MODES if spec.command}

# Issue 26: the closing lines of a run that did not complete, each naming the session.
STOPPED = "⏸️ 运行未完成（会话 {sid}）。继续：paicli --session {sid} --continue"
STOPPED_REPL = "⏸️ 运行未完成（会话 {sid}），输入 /continue 继续执行。"
NOT_COMPLETED = "会话 {sid}，回到它：paicli --session {sid}"
