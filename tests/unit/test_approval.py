from tools.approval import Allow, Ask, Deny, decide, read_answer


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


def test_answers_map_to_decisions_and_unreadable_answers_reject():
    ask = Ask("execute_command", {"command": "ls"}, "🔴 高危", "")
    assert read_answer("y", ask) == (Allow({"command": "ls"}), False)
    assert read_answer({"decision": "approve_all"}, ask) == (Allow({"command": "ls"}), True)
    assert read_answer({"decision": "edit", "args": {"command": "pwd"}}, ask) == (Allow({"command": "pwd"}), False)
    assert read_answer("s", ask) == (Deny("[HITL] 操作已被跳过"), False)
    assert read_answer({"decision": "reject"}, ask) == (Deny("[HITL] 操作已被拒绝：用户拒绝了此操作"), False)
    assert read_answer(42, ask)[0].text.startswith("[HITL] 操作已被拒绝")
    assert isinstance(read_answer("whatever", ask)[0], Deny)
