"""One usage value and one run result for every mode (issue 36 item 4): a model call's usage is a
``Usage``, adding two is ``+``, a ReAct turn's watcher and a Plan/Team run's watcher add the same
calls into the same figures, and the token line, the status bar and ``/memory`` read them the
same whichever mode a result came from."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from paicli.run.driver import TurnWatcher, UnitWatcher, counted
from paicli.run.result import COMPLETED, FAILED, PARTIAL, RunResult, Usage
from paicli.ui.render import Renderer, RunLine, usage_line
from paicli.ui.status_bar import StatusBar

usages = st.builds(Usage, *(st.integers(0, 10**9) for _ in range(4)))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a busy machine is no failure
@given(usages, usages, usages)
def test_adding_usage_is_one_operation_in_any_order(a, b, c):
    assert a + b == b + a and (a + b) + c == a + (b + c) and a + Usage() == a
    total = a + b
    assert (total.input, total.output, total.cached, total.calls) == (
        a.input + b.input, a.output + b.output, a.cached + b.cached, a.calls + b.calls)
    assert total.total == total.input + total.output


def test_one_call_reads_langchains_usage_metadata_cache_hits_included():
    metadata = {"input_tokens": 1000, "output_tokens": 50, "total_tokens": 1050,
                "input_token_details": {"cache_read": 900}}
    assert Usage.of_call(metadata) == Usage(input=1000, output=50, cached=900, calls=1)
    assert Usage.of_call({"input_tokens": 7, "output_tokens": 2}) == Usage(7, 2, 0, 1)
    assert Usage.of_call(None) == Usage(calls=1)  # a call that reported nothing is still a call
    assert Usage.of_call({"input_tokens": None, "input_token_details": None}) == Usage(calls=1)


def test_a_usage_is_a_value_it_is_never_changed_in_place():
    usage = Usage(1, 2, 0, 1)
    with pytest.raises(AttributeError):
        usage.calls += 1  # type: ignore[misc]
    kept, usage2 = usage, usage + Usage(calls=1)
    assert kept == Usage(1, 2, 0, 1) and usage2.calls == 2


def message(text: str, usage: tuple[int, int, int], calls: int = 0) -> AIMessage:
    tool_calls = [{"name": "read_file", "args": {"path": f"f{i}"}, "id": f"c{i}"} for i in range(calls)]
    return AIMessage(text, tool_calls=tool_calls,
                     usage_metadata={"input_tokens": usage[0], "output_tokens": usage[1],
                                     "total_tokens": usage[0] + usage[1],
                                     "input_token_details": {"cache_read": usage[2]}})


class QuietUI:
    """What both watchers show, dropped: this test is about what they count."""

    def __init__(self):
        self.run_line = RunLine()

    def model_message(self, message, unit=None):
        pass

    def tool_results(self, messages, unit=None):
        pass


CALLS = [((900, 30, 800), 1), ((1200, 40, 1000), 0)]


def test_a_react_turn_and_a_plan_run_count_the_same_calls_the_same_and_close_on_the_same_line():
    """The same two model calls, once as a ReAct turn's and once as a Plan task's (and the
    planner's, which a run reports as a custom event): one value, one token line."""
    session = SimpleNamespace(external_sources=())
    turn, run = RunResult(seconds=2.5), RunResult(seconds=2.5)
    react = TurnWatcher(session, QuietUI(), turn)
    for (usage, calls) in CALLS:
        react.on_update((), "call_model", {"messages": [message("答" if not calls else "", usage, calls)]})
    plan = UnitWatcher(QuietUI(), run)
    plan.on_custom({"usage": {"input_tokens": 900, "output_tokens": 30,
                              "input_token_details": {"cache_read": 800}}})  # the planner's call
    plan.on_custom({"unit": "task_1", "ns": "task_1:x"}, ("task_1:x",))
    plan.on_update(("task_1:x",), "call_model", {"messages": [message("", (1200, 40, 1000), 1)]})  # the task's
    assert turn.usage == run.usage == Usage(input=2100, output=70, cached=1800, calls=2)
    assert turn.answer == "答"
    line = "📊 Token: 2100 输入 (缓存命中 1800, 86%) / 70 输出 / 2170 合计 | ⏱ 2.5s"
    assert usage_line(turn) == usage_line(run) == line


def test_a_react_turn_that_failed_is_a_failed_result_with_its_error_as_detail():
    turn = RunResult()
    TurnWatcher(SimpleNamespace(external_sources=()), QuietUI(), turn).on_update(
        (), "call_model", {"error": "❌ 调用 LLM 失败: boom", "messages": []})
    assert turn.failed and turn.detail == "❌ 调用 LLM 失败: boom" and not turn.completed


def test_a_run_in_any_mode_adds_its_calls_to_the_session_even_when_cut_short():
    session = SimpleNamespace(usage=Usage(10, 1, 0, 1))
    with counted(session, RunResult(usage=Usage(5, 5, 2, 2))):
        pass
    result = RunResult()
    with pytest.raises(KeyboardInterrupt), counted(session, result):
        result.usage += Usage(1, 1, 0, 1)
        raise KeyboardInterrupt
    assert session.usage == Usage(16, 7, 2, 4)


def closing(result: RunResult, *, repl: bool, answered: bool = False) -> tuple[str, str, list[str]]:
    """What ``Renderer.finish`` prints for ``result``: (stdout, stderr, the answers it handed on)."""
    out, err, shown = io.StringIO(), io.StringIO(), []
    ui = Renderer(stream_answer=repl, out=out, err=err, show_answer=shown.append)
    if answered:  # a ReAct answer the REPL showed as it came
        ui.model_message(AIMessage(result.answer))
    ui.finish(result)
    return out.getvalue(), err.getvalue(), shown


LINE = "📊 Token: 20 输入 / 5 输出 / 25 合计 | ⏱ 1.0s\n"
USED = Usage(20, 5, 0, 2)


def test_the_closing_lines_come_from_the_result_never_from_its_mode():
    # -p: the answer handed to stdout, the token line on stderr, for a turn and for a run alike
    for status in (COMPLETED, PARTIAL):
        assert closing(RunResult("答案", status, 1.0, usage=USED), repl=False) == ("", LINE, ["答案"])
    # the REPL: a ReAct answer already shown is not shown again; a run's summary is shown once
    out, err, shown = closing(RunResult("答案", COMPLETED, 1.0, usage=USED), repl=True, answered=True)
    assert (out, err, shown) == ("答案\n" + LINE, "", [])
    assert closing(RunResult("✅ 计划执行完成！", COMPLETED, 1.0, usage=USED), repl=True) == (LINE, "", ["✅ 计划执行完成！"])
    # failed: its text and why, on stderr, nothing handed on as the answer
    failed = RunResult("❌ 执行失败: 计划必须是 JSON 对象", FAILED, 1.0, "模型的回复（5 字符）: 这不是计划", USED)
    assert closing(failed, repl=False) == ("", "❌ 执行失败: 计划必须是 JSON 对象\n模型的回复（5 字符）: 这不是计划\n" + LINE, [])
    # completed with nothing to say: said so; no model call, no token line
    assert closing(RunResult("", COMPLETED, 1.0), repl=False) == ("", "⚠️ 模型返回了空回复\n", [])


class BarApp:
    started, approval, session_mode = False, "auto", "auto"
    settings = SimpleNamespace(status_bar=True, model="deepseek-chat", context_window=128_000,
                               price=lambda: None, project_root=Path("/nonexistent"), mcp=SimpleNamespace(servers={}))
    skills = SimpleNamespace(listing=lambda root: [])


async def test_the_status_bar_reads_the_last_results_usage_in_any_mode_and_a_command_keeps_it():
    bar = StatusBar(BarApp())
    assert bar.fields()["turn"] == "本轮 输入 0 输出 0 缓存 0" and bar.fields()["seconds"] == "0.0s"
    await bar.after_turn(RunResult("✅ 计划执行完成！", COMPLETED, 3.25, usage=Usage(2100, 70, 1800, 2)))
    await bar.after_turn(None)  # a command: the figures stay
    assert bar.fields()["turn"] == "本轮 输入 2100 输出 70 缓存 1800" and bar.fields()["seconds"] == "3.2s"
