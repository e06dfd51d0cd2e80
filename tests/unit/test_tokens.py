"""Token estimation (reference a): the character heuristic, messages, images, schema, the cache."""

import base64

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.memory.tokens import Estimator, estimate_messages, estimate_text, schema_tokens


def test_reference_example_mixes_chinese_and_ascii():
    assert estimate_text("项目使用 Java 17") == 5


def test_empty_text_costs_nothing():
    assert estimate_text("") == 0 and estimate_text(None) == 0


def test_cjk_range_bounds_are_exclusive():
    assert estimate_text("一一一一") == 1  # U+4E00 counts as "other": 4/4
    assert estimate_text("丁丁丁丁") == 3  # U+4E01 is CJK: ceil(4/1.5)
    assert estimate_text("\u9fff" * 4) == 1


def test_emoji_counts_two_utf16_units_like_java():
    assert estimate_text("😀😀😀") == 2  # 6 units / 4
    assert estimate_text("abcdefgh") == 2


def test_message_adds_four_tokens_of_overhead():
    assert estimate_messages([HumanMessage("项目使用 Java 17")]) == 9


def test_tool_call_arguments_and_reasoning_are_counted():
    message = AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "c1"}],
                        additional_kwargs={"reasoning_content": "abcd" * 10})
    # '{"path": "a.py"}' is 16 chars -> 4; reasoning 40 chars -> 10; overhead 4
    assert estimate_messages([message]) == 18


def test_invalid_tool_call_arguments_are_counted_raw():
    message = AIMessage("", invalid_tool_calls=[{"name": "x", "args": "{" * 8, "id": "b1", "error": None}])
    assert estimate_messages([message]) == 2 + 4


def test_base64_image_costs_by_decoded_size_clamped():
    small = base64.b64encode(b"x" * 3000).decode()
    large = "A" * 1_000_000  # 750,000 bytes -> 976 tokens
    huge = "A" * 10_000_000
    def image(data):
        return HumanMessage([{"type": "text", "text": "abcd"}, {"type": "image", "base64": data, "mime_type": "image/png"}])
    assert estimate_messages([image(small)]) == 1 + 256 + 4
    assert estimate_messages([image(large)]) == 1 + 976 + 4
    assert estimate_messages([image(huge)]) == 1 + 4096 + 4


def test_data_url_and_remote_image_urls():
    data_url = HumanMessage([{"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1_000_000}}])
    remote = HumanMessage([{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}])
    assert estimate_messages([data_url]) == 976 + 4
    assert estimate_messages([remote]) == 1024 + 4


def test_schema_and_system_prompt_are_part_of_the_estimate():
    schema = [{"type": "function", "function": {"name": "read_file", "description": "读取文件", "parameters": {}}}]
    messages = [HumanMessage("abcd")]
    assert estimate_messages(messages, tools_schema=schema, system="abcdefgh") == 5 + schema_tokens(schema) + 2 + 4
    assert schema_tokens(schema) > 0 and schema_tokens(None) == 0


def test_cache_notices_content_replaced_under_the_same_id():
    estimator = Estimator()
    original = ToolMessage("x" * 4000, tool_call_id="c1", id="t1")
    assert estimator.estimate([original]) == 1004
    cleared = original.model_copy(update={"content": "short"})
    assert estimator.estimate([cleared]) == 2 + 4


def test_cached_estimate_equals_fresh_estimate():
    messages = [HumanMessage(f"第 {i} 条消息 with some text", id=f"m{i}") for i in range(200)]
    estimator = Estimator()
    first = estimator.estimate(messages)
    assert estimator.estimate(messages) == first == Estimator().estimate(messages)
    assert estimator.estimate(messages[:100]) == Estimator().estimate(messages[:100])


def test_messages_without_ids_are_estimated_too():
    assert Estimator().estimate([HumanMessage("abcd"), HumanMessage("abcdabcd")]) == 5 + 6


def test_running_totals_follow_appends_removals_and_content_replaced_in_place():
    messages = [HumanMessage("a" * (4 * i + 4), id=f"m{i}") for i in range(50)]
    estimator = Estimator()
    estimator.estimate(messages)
    grown = messages + [HumanMessage("b" * 400, id="new")]
    assert estimator.estimate(grown) == Estimator().estimate(grown)
    shrunk = grown[:10] + grown[20:]
    assert estimator.estimate(shrunk) == Estimator().estimate(shrunk)
    shrunk[3].content = "c" * 4_000  # a plain assignment, not model_copy
    assert estimator.estimate(shrunk) == Estimator().estimate(shrunk)
    assert estimator.estimate(list(reversed(shrunk))) == Estimator().estimate(shrunk)
