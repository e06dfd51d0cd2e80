"""The embedding example of the README (issue 36 item 5), run as written: a graph built with the
caller's own chat model, checkpointer and store, run with ``invoke`` and ``ainvoke``.

The models are langchain_core's fakes, which report no ``finish_reason`` and have no
``bind_tools``, the project's scripted model, and fakes that report Anthropic's ``stop_reason``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from paicli.graphs.react import build_graph
from paicli.nodes.core.state import Deps, RunContext
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call

README = Path(__file__).resolve().parents[2] / "README.md"
NOTES = "the build runs with make\n"


def readme_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Use the graphs from Python", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def run_example(model: Any, project: Path) -> dict[str, Any]:
    """The README's block, with ``model`` and the project filled in; its names afterwards."""
    names: dict[str, Any] = {"model": model}
    exec(readme_example().replace('"/path/to/project"', repr(str(project))), names)  # noqa: S102
    return names


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text(NOTES, encoding="utf-8")
    return tmp_path


def read_and_remember() -> list[AIMessage]:
    """A read, a memory write in the same step, then the answer: as any tool-calling model sends it."""
    return [AIMessage("", tool_calls=[tool_call("read_file", {"path": "notes.txt"}, "c1"),
                                      tool_call("save_memory", {"fact": "构建用 make"}, "c2")]),
            AIMessage("notes.txt 写着构建用 make。")]


def results(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def assert_read_and_remembered(names: dict[str, Any]) -> None:
    state = names["state"]
    done = results(state)
    assert NOTES.strip() in done["c1"].content and done["c1"].status == "success"
    assert done["c2"].status == "success", done["c2"].content
    assert state["messages"][-1].content == "notes.txt 写着构建用 make。"
    memories = [item.value for item in names["store"].search(("memories",))]
    assert any("构建用 make" in json.dumps(value, ensure_ascii=False) for value in memories), memories


def test_the_readme_example_runs_with_invoke_and_a_fake_that_reports_no_finish_reason(project, capsys):
    names = run_example(FakeMessagesListChatModel(responses=read_and_remember()), project)
    assert_read_and_remembered(names)
    assert capsys.readouterr().out == "notes.txt 写着构建用 make。\n"


def openai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def test_the_same_graph_goes_on_with_ainvoke_and_a_streaming_fake(project):
    # GenericFakeChatModel streams text and additional_kwargs only: its calls are in OpenAI's shape,
    # each argument string streamed as it was sent.
    model = GenericFakeChatModel(messages=iter([
        AIMessage("", additional_kwargs={"tool_calls": [openai_call("c1", "read_file", '{"path": "notes.txt"}'),
                                                        openai_call("c2", "save_memory", '{"fact": "构建用 make"}')]}),
        "notes.txt 写着构建用 make。",
        AIMessage("", additional_kwargs={"tool_calls": [openai_call("c3", "list_dir", '{"path": "."}')]}),
        "目录里有 notes.txt。",
    ]))
    names = run_example(model, project)
    assert_read_and_remembered(names)
    state = await names["graph"].ainvoke({"messages": [HumanMessage("目录里有什么？")]}, names["config"],
                                         context=names["context"])
    assert "notes.txt" in results(state)["c3"].content
    assert state["messages"][-1].content == "目录里有 notes.txt。"


async def test_a_cut_argument_string_is_refused_though_the_model_reports_no_finish_reason(project):
    cut = '{"path": "notes.txt", "content": "half of the fi'
    model = GenericFakeChatModel(messages=iter([
        AIMessage("", additional_kwargs={"tool_calls": [openai_call("c1", "write_file", cut)]}),
        "没写成。", "好的。",
    ]))
    names = run_example(model, project)
    refused = results(names["state"])["c1"]
    assert refused.status == "error" and "参数不是合法的 JSON 对象" in refused.content and "未执行" in refused.content
    assert (project / "notes.txt").read_text(encoding="utf-8") == NOTES


@pytest.mark.parametrize(("stop_reason", "runs"), [("tool_use", True), ("max_tokens", False)])
def test_a_stop_reason_is_read_like_a_finish_reason(project, stop_reason, runs):
    write = AIMessage("", tool_calls=[tool_call("write_file", {"path": "out.txt", "content": "x"}, "c1")],
                      response_metadata={"stop_reason": stop_reason})
    names = run_example(FakeMessagesListChatModel(responses=[write, AIMessage("完成。")]), project)
    done = results(names["state"])["c1"]
    assert (project / "out.txt").exists() == runs
    assert (done.status == "success") == runs
    if not runs:
        assert "模型输出被截断" in done.content


def test_the_readme_example_with_the_scripted_model(project):
    model = ScriptedChatModel([
        ai("", tool_call("read_file", {"path": "notes.txt"}, "c1"), tool_call("save_memory", {"fact": "构建用 make"}, "c2")),
        ai("notes.txt 写着构建用 make。"),
    ])
    names = run_example(model, project)
    model.assert_consumed()
    assert_read_and_remembered(names)
    assert {t["function"]["name"] for t in model.seen_tools[0]} >= {"read_file", "save_memory"}  # told the tools


async def test_a_question_stops_the_run_and_command_resume_answers_it(project):
    """``approval="ask"``: the write waits for a person (ainvoke), then runs on the answer (invoke)."""
    model = ScriptedChatModel([ai("", tool_call("write_file", {"path": "out.txt", "content": "x"}, "c1")),
                               ai("写好了。")])
    graph = build_graph(Deps(model=model), checkpointer=InMemorySaver(), store=InMemoryStore())
    config, context = {"configurable": {"thread_id": "t"}}, RunContext(project_root=str(project), approval="ask")
    state = await graph.ainvoke({"messages": [HumanMessage("写 out.txt")]}, config, context=context)
    assert [i.value["tool"] for i in state["__interrupt__"]] == ["write_file"] and not (project / "out.txt").exists()
    state = graph.invoke(Command(resume={i.id: {"decision": "approve"} for i in state["__interrupt__"]}), config,
                         context=context)
    assert (project / "out.txt").read_text(encoding="utf-8") == "x"
    assert state["messages"][-1].content == "写好了。"
    model.assert_consumed()
