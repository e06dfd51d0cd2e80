"""A tool is one ToolSpec (paicli issue 25, item 1): a new spec's facts reach approval, the
audit log, the external-content record, the protected-path and guard rules, the turn's files
and the web rules with no other edit. Its facts travel with the run's tool table (issue 36):
nothing registers them by name, so another table's tool of the same name changes nothing here."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.nodes.core.turn_files import turn_files
from paicli.ui.render import group_lines
from tests.graphs.conftest import Harness
from tests.support import named
from tests.support.scripted_model import ScriptedChatModel, ai, tool_call
from paicli.tools.base import ToolContext, ToolSpec, failed
from paicli.tools.call import facts_for
from paicli.tools.facts import ToolFacts
from paicli.tools.policy.approval import Allow, Ask
from paicli.tools.policy.audit import AuditLog
from paicli.tools.policy.classify import classify
from paicli.tools.policy.external_context import NETWORK_COMMAND_SOURCE
from paicli.tools.registry import BUILTIN_TOOLS
from paicli.tools.specs import BUILTIN_SPECS

ADDED: dict[str, ToolSpec] = {}  # the tools a test adds (the ``added`` fixture): the table the rules read
(decide, covered, approval_key, asking_tools, is_audited, command_of, external_source, guard_refusal, protected_write,
 authorize, expose, is_web_fetch_tool, is_web_tool) = (
    partial(getattr(named, name), tools=ADDED) for name in
    ("decide", "covered", "approval_key", "asking_tools", "is_audited", "command_of", "external_source", "guard_refusal",
     "protected_write", "authorize", "expose", "is_web_fetch_tool", "is_web_tool"))


def facts(name: str) -> ToolFacts:
    return named.facts(name, ADDED)


SCHEMA = {"type": "object", "properties": {"target": {"type": "string"}, "text": {"type": "string"}},
          "required": ["target"]}
WRITER = ToolFacts(approval="auto", danger="🟠 自定义", risk="将写入自定义目标", auto_review=True, writes="project",
                   path_arg="target", guard="path", turn_file=True, audited=True, external=True, web="fetch",
                   label="🪪 盖章 {n} 个文件")


def stamp(args: dict[str, Any], ctx: Any) -> str:
    target = ctx.root / str(args.get("target") or "")
    if not target.resolve().is_relative_to(ctx.root):
        return failed("outside")
    target.write_text(str(args.get("text") or "stamped"), encoding="utf-8")
    return f"stamped {args.get('target')}"


@pytest.fixture
def added():
    """Tools this test adds to the table (``ADDED``), emptied afterwards."""

    def add(name: str, tool_facts: ToolFacts, fn=stamp) -> ToolSpec:
        ADDED[name] = ToolSpec(name, "测试用工具", SCHEMA, fn, facts=tool_facts)
        return ADDED[name]

    yield add
    ADDED.clear()


def test_a_new_spec_with_every_fact_set_is_picked_up_by_every_rule(added, tmp_path):
    added("stamp_file", WRITER)
    args = {"target": "notes.md"}
    # Approval: asks under auto, with the spec's texts; the reviewer may answer; --yes runs it.
    asked = decide("stamp_file", args, "auto")
    assert asked == Ask("stamp_file", args, "🟠 自定义", "将写入自定义目标", review=True)
    assert isinstance(decide("stamp_file", args, "yes"), Allow)
    assert "stamp_file" in asking_tools()
    # Protected paths: its path argument is checked; after external content --yes is refused.
    notice = protected_write("stamp_file", {"target": ".git/hooks/pre-commit"}, str(tmp_path))
    assert notice and ".git/hooks/pre-commit" in notice
    assert protected_write("stamp_file", {"path": ".git/hooks/pre-commit"}, str(tmp_path)) is None
    assert decide("stamp_file", {"target": "PAI.md"}, "yes", protected=notice, external=True).reason == "PROTECTED_EXTERNAL_CONTEXT"
    # The write guard runs before anyone is asked, on that argument.
    assert "项目" in (guard_refusal("stamp_file", {"target": "../outside.txt"}, tmp_path) or "")
    assert guard_refusal("stamp_file", {"target": "inside.txt"}, tmp_path) is None
    # Audit, external content, the turn's files, the web rules.
    assert is_audited("stamp_file")
    assert external_source("stamp_file", args) == "stamp_file"
    call = {"name": "stamp_file", "args": args, "id": "c1", "type": "tool_call"}
    turn = [HumanMessage("go"), AIMessage("", tool_calls=[call]), ToolMessage("ok", tool_call_id="c1")]
    assert turn_files(turn, {**BUILTIN_TOOLS, **ADDED}) == ("notes.md",)
    assert is_web_tool("stamp_file") and is_web_fetch_tool("stamp_file")
    assert expose(classify("整理一下笔记"), [("stamp_file", "")]) == set()  # a fetch tool waits for a URL
    # What a person sees of a batch: the spec's group header.
    assert group_lines([call, call], facts)[0] == "🪪 盖章 2 个文件"


def test_the_defaults_are_a_harmless_local_tool(added, tmp_path):
    added("quiet_tool", ToolFacts())
    args = {"target": ".git/config"}
    assert decide("quiet_tool", args, "ask") == Allow(args)
    assert protected_write("quiet_tool", args, str(tmp_path)) is None
    assert guard_refusal("quiet_tool", {"target": "../x"}, tmp_path) is None
    assert not is_audited("quiet_tool") and external_source("quiet_tool", args) is None
    assert not is_web_tool("quiet_tool") and "quiet_tool" not in asking_tools()
    assert group_lines([{"name": "quiet_tool", "args": args}], facts)[0] == "🔧 quiet_tool × 1"


def test_a_read_tool_gets_the_read_guard_with_its_default_path(added, tmp_path):
    added("peek", ToolFacts(guard="path", path_arg="target", path_default="..", turn_file=True))
    assert guard_refusal("peek", {}, tmp_path)  # the default path is outside the project
    assert guard_refusal("peek", {"target": "."}, tmp_path) is None
    assert decide("peek", {}, "ask") == Allow({})
    assert protected_write("peek", {"target": ".git/config"}, str(tmp_path)) is None  # reads are never gated


def test_a_command_tool_gets_the_command_guard_and_the_sandbox_flags(added, tmp_path):
    added("run_task", ToolFacts(approval="ask", danger="🔴 高危", risk="运行任务", guard="command"))
    network = {"command": "pip install x", "network": True, "reason": "装依赖"}
    assert "sudo" in (guard_refusal("run_task", {"command": "sudo true"}, tmp_path) or "")
    assert command_of("run_task", {"command": "ls"}) == "ls"
    assert approval_key("run_task", network) == "run_task:network"
    assert external_source("run_task", network) == NETWORK_COMMAND_SOURCE
    outside = decide("run_task", {"command": "ls", "sandbox": False, "reason": "r"}, "yes")
    assert outside.reason == "sandbox_outside"
    assert decide("run_task", {"command": "ls"}, "auto") == Allow({"command": "ls"})  # "ask": /hitl on only
    assert isinstance(decide("run_task", {"command": "ls"}, "ask"), Ask)


def test_an_always_asked_tool_asks_at_every_level_and_approve_all_never_covers_it(added):
    added("wipe", ToolFacts(approval="always", danger="🔴 高危", risk="清空", notice="每次都要确认"))
    for level in ("auto", "ask", "yes"):
        ask = decide("wipe", {}, level, {"wipe"})
        assert isinstance(ask, Ask) and ask.notice == "每次都要确认" and not covered(ask, {"wipe"})
    assert isinstance(decide("wipe", {}, "yes", allow_revert=True), Allow)


def test_a_skill_writer_asks_as_a_protected_write_and_is_refused_after_external_content(added):
    added("keep_note", ToolFacts(approval="ask", writes="skill", audited=True))
    notice = protected_write("keep_note", {"name": "s", "file": "references/a.md"}, "/tmp")
    assert notice and notice.startswith("写入 Skill 参考文件 s/references/a.md")
    denied = authorize(classify("记一下"), "keep_note", {}, ["keep_note"], external_sources=("web_fetch",))
    assert denied and denied.reason == "SKILL_EXTERNAL_CONTEXT"


def test_a_tool_of_the_same_name_in_another_table_changes_nothing_here(added):
    """No registry: a spec made elsewhere (another session's table, a test's) is not looked up by name."""
    quiet = ToolSpec("write_file", "x", SCHEMA, stamp, facts=ToolFacts())
    assert facts_for("write_file", {"write_file": quiet}) == ToolFacts()
    assert facts_for("write_file", BUILTIN_TOOLS).writes == "project" and isinstance(decide("write_file", {}, "ask"), Ask)
    assert facts_for("write_file", {}) == ToolFacts()  # not in the table: not advertised, a harmless read


def test_every_builtin_spec_is_data_the_registry_binds():
    for spec in BUILTIN_SPECS:
        assert isinstance(spec.fn, str) and spec.facts is not None
        assert callable(BUILTIN_TOOLS[spec.name].fn) and facts_for(spec.name, BUILTIN_TOOLS) == spec.facts
    assert facts_for("mcp__demo__echo", {}).audited and facts_for("mcp__demo__echo", {}).external


async def test_the_agent_loop_asks_runs_and_audits_a_new_tool(added, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    spec = added("stamp_file", replace(WRITER, web=None))  # a fetch tool would wait for a URL
    model = ScriptedChatModel([ai("", tool_call("stamp_file", {"target": "out.txt", "text": "hi"}, id="s1")),
                               ai("好了")])
    audit = AuditLog(tmp_path / "audit")
    h = Harness(model, project, approval="ask", tools={**BUILTIN_TOOLS, spec.name: spec}, audit=audit)
    [question] = await h.turn("盖个章")
    assert (question.value["tool"], question.value["danger"], question.value["risk"]) == \
        ("stamp_file", "🟠 自定义", "将写入自定义目标")
    assert await h.resume({"decision": "approve"}) == []
    assert (project / "out.txt").read_text(encoding="utf-8") == "hi"
    [line] = [json.loads(text) for text in audit.path().read_text(encoding="utf-8").splitlines()]
    assert (line["tool"], line["outcome"], line["approver"]) == ("stamp_file", "allow", "hitl")


def test_a_tool_context_works_out_the_turn_files_once_and_only_when_a_tool_asks(tmp_path):
    asked: list[int] = []
    ctx = ToolContext(root=tmp_path, files_of_turn=lambda: asked.append(1) or ("notes.md",))
    assert asked == []  # building the context (every tool step) reads nothing
    assert ctx.source_files == ("notes.md",) and ctx.source_files == ("notes.md",)
    assert asked == [1]
    assert ToolContext(root=tmp_path).source_files == ()
