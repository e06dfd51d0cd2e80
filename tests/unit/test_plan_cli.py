"""The CLI pieces of Plan runs: /plan and /continue, answering several interrupts, the
namespaced ledger a run lives in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint

from paicli.memory.ledger.namespaced import NamespacedSaver
from paicli.memory.ledger.saver import JsonlLedgerSaver
from paicli.run.answers import Answers
from paicli.app import App
from paicli.commands import dispatch as commands


@dataclass
class Pending:
    id: str
    value: Any


class RecordingUI:
    def __init__(self, *answers: Any):
        self.answers, self.asked, self.notices = list(answers), [], []

    async def approve(self, request):
        self.asked.append(request)
        return self.answers.pop(0)

    async def review(self, request):
        self.asked.append(request)
        return self.answers.pop(0)

    def notice(self, text):
        self.notices.append(text)


def ask(tool: str, unit: str) -> dict:
    return {"tool": tool, "args": {}, "danger": "🟡 中危", "unit": unit}


async def test_approve_all_in_one_task_answers_the_same_tool_in_the_others():
    ui = RecordingUI({"decision": "approve_all"}, {"decision": "reject", "reason": "不要"})
    stops = [Pending("1", ask("write_file", "task_1")), Pending("2", ask("execute_command", "task_2")),
             Pending("3", ask("write_file", "task_3"))]
    answers = await Answers(ui).answer_all(stops)
    assert answers == {"1": {"decision": "approve_all"}, "2": {"decision": "reject", "reason": "不要"},
                       "3": {"decision": "approve_all"}}
    assert [r["unit"] for r in ui.asked] == ["task_1", "task_2"]
    assert ui.notices[:2] == ["🔐 任务 [task_1] 请求审批", "🔐 任务 [task_2] 请求审批"]
    assert ui.notices[-1] == "  [task_3] write_file 已全部放行，自动批准"


async def test_a_plan_review_goes_to_the_review_dialog():
    ui = RecordingUI("顺便跑测试")
    answers = await Answers(ui).answer_all([Pending("r", {"kind": "plan_review", "summary": "📋 计划摘要"})])
    assert answers == {"r": "顺便跑测试"} and ui.asked[0]["kind"] == "plan_review"


class Args:
    mode, session, project, yes = "react", None, None, False


class PlanApp:
    next_mode = None
    session_id = "s-this"

    class settings:  # a project with no other session (paicli.run.comeback.newest_session finds none)
        home = project_root = Path("/nonexistent/paicli-test")

    class session:
        unfinished = None
        checkpointer = None

        @classmethod
        async def unfinished_mode(cls):
            return cls.unfinished


async def test_plan_with_a_task_starts_a_run_and_without_one_plans_the_next_input(tmp_path, monkeypatch):
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path))
    monkeypatch.setenv("PAICLI_API_KEY", "k")
    said, app = [], App(Args())
    assert (await commands.handle("/plan 重构 utils 然后跑测试", app, said.append)).run == ("plan", "重构 utils 然后跑测试")
    assert (await commands.handle("/plan", app, said.append)).run is None
    assert said == ["📋 下一条任务将使用 Plan-and-Execute 模式，输入任务前按 ESC 可取消，执行完成后自动回到默认 ReAct。"]
    assert app.mode_for_input() == "plan" and app.mode_for_input() == "react"  # the next input only


async def test_continue_finishes_an_unfinished_run_or_says_there_is_none():
    said, app = [], PlanApp()
    assert (await commands.handle("/continue", app, said.append)).run is None
    assert said == ["当前会话没有未完成的运行。"]
    app.session.unfinished = "plan"
    assert (await commands.handle("/continue", app, said.append)).run == ("plan", None)


def test_a_namespaced_graph_keeps_its_checkpoints_apart_from_the_threads_own(tmp_path):
    ledger = JsonlLedgerSaver(tmp_path)
    plan = NamespacedSaver(ledger, "plan")
    root = {"configurable": {"thread_id": "s1", "checkpoint_ns": ""}}
    mine, theirs = empty_checkpoint(), empty_checkpoint()
    mine["channel_values"], theirs["channel_values"] = {"goal": "plan's"}, {"goal": "react's"}
    ledger.put(root, theirs, {"source": "input", "step": -1}, {})
    saved = plan.put(root, mine, {"source": "input", "step": -1, "mode": "plan"}, {"goal": "1"})
    assert saved["configurable"]["checkpoint_ns"] == ""
    assert plan.get_tuple(root).checkpoint["id"] == mine["id"]
    assert ledger.get_tuple(root).checkpoint["id"] == theirs["id"]
    assert ledger.get_tuple({"configurable": {"thread_id": "s1", "checkpoint_ns": "plan"}}).checkpoint["id"] == mine["id"]
    assert [t.checkpoint["id"] for t in plan.list({"configurable": {"thread_id": "s1"}})] == [mine["id"]]
    task = {"configurable": {"thread_id": "s1", "checkpoint_ns": "task:abc"}}
    plan.put(task, empty_checkpoint(), {"source": "loop", "step": 1}, {})
    assert plan.get_tuple(task).config["configurable"]["checkpoint_ns"] == "task:abc"
    assert ledger.get_tuple({"configurable": {"thread_id": "s1", "checkpoint_ns": "plan|task:abc"}}) is not None
