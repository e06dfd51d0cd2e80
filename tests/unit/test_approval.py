from paicli.tools.policy.approval import Allow, Ask, Deny, Unclear, approval_request, read_answer
from tests.support.named import decide


def test_auto_level_asks_only_for_commands():
    assert isinstance(decide("execute_command", {"command": "ls"}, "auto"), Ask)
    assert isinstance(decide("write_file", {}, "auto"), Allow)
    assert isinstance(decide("read_file", {}, "auto"), Allow)


def test_ask_level_asks_for_every_dangerous_tool():
    for tool in ("write_file", "edit_file", "execute_command"):
        assert isinstance(decide(tool, {}, "ask"), Ask)
    assert isinstance(decide("grep_code", {}, "ask"), Allow)


def test_yes_level_and_approve_all_skip_the_question():
    assert isinstance(decide("execute_command", {}, "yes"), Allow)
    assert isinstance(decide("execute_command", {}, "ask", {"execute_command"}), Allow)


def test_answers_map_to_decisions():
    ask = Ask("execute_command", {"command": "ls"}, "🔴 高危", "")
    assert read_answer("y", ask) == (Allow({"command": "ls"}, "hitl"), False)
    assert read_answer({"decision": "approve_all"}, ask) == (Allow({"command": "ls"}, "hitl"), True)
    assert read_answer({"decision": "edit", "args": {"command": "pwd"}}, ask) == (Allow({"command": "pwd"}, "hitl"), False)
    assert read_answer("s", ask) == (Deny("[HITL] 操作已被跳过", "hitl"), False)
    assert read_answer({"decision": "reject"}, ask) == (Deny("[HITL] 操作已被拒绝：用户拒绝了此操作", "hitl"), False)
    assert read_answer({"decision": "n", "reason": "太危险"}, ask) == (Deny("[HITL] 操作已被拒绝：太危险", "hitl"), False)


def test_the_menu_letter_m_edits_the_arguments():
    ask = Ask("execute_command", {"command": "ls"}, "🔴 高危", "")
    assert read_answer({"decision": "m", "args": {"command": "pwd"}}, ask) == (Allow({"command": "pwd"}, "hitl"), False)


def test_answers_that_are_not_understood_are_unclear_not_rejections():
    ask = Ask("execute_command", {"command": "ls"}, "🔴 高危", "")
    for answer in (42, None, "whatever", {"decision": "maybe"}, {"args": {}}, "m", {"decision": "edit"},
                   {"decision": "edit", "args": "pwd"}):
        decision, approve_all = read_answer(answer, ask)
        assert isinstance(decision, Unclear) and not approve_all, answer
    assert "whatever" in read_answer("whatever", ask)[0].problem
    assert '"args"' in read_answer("m", ask)[0].problem


def test_every_resume_value_the_request_lists_is_understood():
    ask = Ask("execute_command", {"command": "ls"}, "🔴 高危", "")
    request = approval_request(ask, "call_1")
    decisions = {name: read_answer(value, ask) for name, value in request["resume"].items()}
    assert decisions["approve"] == (Allow({"command": "ls"}, "hitl"), False)
    assert decisions["approve_all"] == (Allow({"command": "ls"}, "hitl"), True)
    assert isinstance(decisions["reject"][0], Deny) and decisions["skip"] == (Deny("[HITL] 操作已被跳过", "hitl"), False)
    assert decisions["edit"] == (Allow({"command": "ls"}, "hitl"), False)  # the template carries the current args
    assert all(letter in request["help"] for letter in ('"y"', '"a"', '"n"', '"s"'))


def test_revert_turn_asks_at_every_level_and_approve_all_never_covers_it():
    from tests.support.named import covered

    for level in ("auto", "ask", "yes"):
        ask = decide("revert_turn", {"offset": 1}, level, {"revert_turn"})
        assert isinstance(ask, Ask) and ask.danger == "🔴 高危", level
        assert "PAICLI_ALLOW_REVERT=yes" in ask.notice
        assert not covered(ask, {"revert_turn"})
    # PAICLI_ALLOW_REVERT=yes lifts only the --yes question (scripts without a terminal)
    assert isinstance(decide("revert_turn", {}, "yes", allow_revert=True), Allow)
    assert isinstance(decide("revert_turn", {}, "auto", allow_revert=True), Ask)
    assert isinstance(decide("revert_turn", {}, "ask", allow_revert=True), Ask)


def test_after_external_content_a_protected_write_needs_a_person_at_every_level():
    args, notice = {"path": "PAI.md", "content": "x"}, "受保护路径 PAI.md（项目指令文件），写入需要用户确认"
    refused = decide("write_file", args, "yes", protected=notice, external=True)
    assert isinstance(refused, Deny) and refused.approver == "policy" and refused.reason == "PROTECTED_EXTERNAL_CONTEXT"
    assert refused.text.startswith("🛡️ 工具调用已拒绝 [PROTECTED_EXTERNAL_CONTEXT]: 本会话已读取网页或 MCP 等外部内容，--yes 不能代替")
    assert refused.text.endswith(notice) and "\n" not in refused.text
    for level in ("auto", "ask"):
        asked = decide("write_file", args, level, frozenset({"write_file"}), protected=notice, external=True)
        assert isinstance(asked, Ask) and asked.danger == "🔴 高危" and "外部内容" in asked.notice
    assert isinstance(decide("write_file", args, "yes", protected=notice), Allow)  # no external content: --yes writes
    assert isinstance(decide("write_file", {"path": "a.txt"}, "yes", external=True), Allow)  # not protected
