"""Which tool calls of a response may run, decided from what the provider sent."""

import pytest

from paicli.nodes.guards.cutoff import (AT_LIMIT, NAMELESS, UNFINISHED, RawCall, arguments_preview, parse_arguments,
                                        rejected_notice, response_problem, sort_calls, stop_problem, stored_name)

CUT = '{"path": "important.py", "content": "def g(): ret'


def test_a_complete_object_parses_to_its_arguments():
    assert parse_arguments('{"path": "a.py", "content": "x = 1\\n"}') == ({"path": "a.py", "content": "x = 1\n"}, None)


def test_unterminated_json_is_rejected_even_though_a_partial_parser_would_complete_it():
    args, why = parse_arguments(CUT)
    assert args is None and why


@pytest.mark.parametrize("raw", ['["a.py"]', '"a.py"', "42", "null"])
def test_json_that_is_not_an_object_is_rejected(raw):
    args, why = parse_arguments(raw)
    assert args is None and "JSON 对象" in why


@pytest.mark.parametrize("raw", ["", "   ", None])
def test_empty_arguments_mean_a_call_without_arguments(raw):
    assert parse_arguments(raw) == ({}, None)


def test_two_objects_back_to_back_are_not_one_object():
    assert parse_arguments('{"a": 1}{"b": 2}')[0] is None


def test_literal_newlines_inside_strings_are_accepted_like_langchain_does():
    assert parse_arguments('{"content": "line1\nline2"}') == ({"content": "line1\nline2"}, None)


def test_finish_reasons():
    assert stop_problem("stop") is None and stop_problem("tool_calls") is None
    assert stop_problem(None) == UNFINISHED and stop_problem("") == UNFINISHED
    assert stop_problem("length") == AT_LIMIT and stop_problem("MAX_TOKENS") == AT_LIMIT


@pytest.mark.parametrize(("metadata", "problem"), [
    pytest.param({"finish_reason": "tool_calls", "model_provider": "openai"}, None, id="openai-finished"),
    pytest.param({"model_provider": "openai"}, UNFINISHED, id="openai-cut-before-its-last-chunk"),
    pytest.param({"model_provider": "deepseek"}, UNFINISHED, id="deepseek-cut"),
    pytest.param({"finish_reason": "length", "model_provider": "deepseek"}, AT_LIMIT, id="at-the-limit"),
    pytest.param({"stop_reason": "tool_use", "model_provider": "anthropic"}, None, id="anthropic-finished"),
    pytest.param({"stop_reason": "end_turn"}, None, id="stop-reason"),
    pytest.param({"stop_reason": "max_tokens"}, AT_LIMIT, id="stop-reason-at-the-limit"),
    pytest.param({}, None, id="no-reason-reported-judged-by-the-message"),
    pytest.param({"model_provider": "some-local-wrapper"}, None, id="a-provider-that-reports-none"),
])
def test_a_response_stops_as_its_model_reports_it(metadata, problem):
    assert response_problem(metadata) == problem


def test_a_response_with_nothing_in_it_and_no_reason_did_not_finish():
    assert response_problem({}, empty=True) == UNFINISHED
    assert response_problem({"finish_reason": "stop"}, empty=True) is None  # an empty answer, said to be one


def test_without_a_reported_reason_a_cut_argument_string_is_still_refused():
    good, cut = RawCall("read_file", '{"path": "a"}', "c1"), RawCall("write_file", CUT, "c2")
    decided = sort_calls([good, cut], response_problem({}))
    assert decided.runnable == [(good, {"path": "a"})]
    [(call, error)] = decided.rejected
    assert call is cut and "参数不是合法的 JSON 对象" in error


def test_a_finished_response_runs_its_complete_calls_and_rejects_the_cut_one():
    good, cut = RawCall("read_file", '{"path": "a"}', "c1"), RawCall("write_file", CUT, "c2")
    decided = sort_calls([good, cut], None)
    assert decided.runnable == [(good, {"path": "a"})]
    [(call, error)] = decided.rejected
    assert call is cut and "参数不是合法的 JSON 对象" in error


@pytest.mark.parametrize("finish", [None, "length"])
def test_a_response_that_did_not_finish_runs_none_of_its_calls(finish):
    calls = [RawCall("read_file", '{"path": "a"}', "c1"), RawCall("write_file", CUT, "c2")]
    decided = sort_calls(calls, stop_problem(finish))
    assert decided.runnable == []
    assert [c.id for c, _ in decided.rejected] == ["c1", "c2"]
    assert all("模型输出被截断" in error and "未执行" in error for _, error in decided.rejected)


def test_a_call_without_a_name_is_not_run():
    assert sort_calls([RawCall(None, "{}", "c1")], None).rejected


def test_the_notice_names_the_cut_and_the_count():
    assert "截断" in rejected_notice(2, AT_LIMIT) and "2 个工具调用未执行" in rejected_notice(2, AT_LIMIT)
    assert "JSON" in rejected_notice(1, None)


def test_a_refusal_quotes_a_bounded_preview_of_what_was_sent():
    raw = '{"content": "' + "a" * 1000 + "\r\x00" + "z" * 80
    [(_, error)] = sort_calls([RawCall("write_file", raw, "c1")], None).rejected
    assert raw[:200] in error and "\\x0d\\x00" + "z" * 80 in error and "\x00" not in error
    assert f"中间省略 {len(raw) - 300} 个字符" in error and f"共 {len(raw)} 个字符" in error and len(error) < 600
    short = sort_calls([RawCall("write_file", CUT, "c1")], UNFINISHED).rejected[0][1]
    assert CUT in short and "省略" not in short and "write_file / edit_file" in short


def test_arguments_preview_of_nothing():
    assert "为空" in arguments_preview(None) and "为空" in arguments_preview("")


def test_a_refused_call_keeps_its_name_only_when_it_is_a_function_name():
    assert stored_name("write_file") == "write_file" and stored_name("mcp__git__log-1") == "mcp__git__log-1"
    assert stored_name(None) == NAMELESS and stored_name("") == NAMELESS
    assert stored_name('write_file", "x') == NAMELESS and stored_name("a" * 65) == NAMELESS
