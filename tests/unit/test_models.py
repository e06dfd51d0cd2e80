import json

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from paicli.run.models import make_chat_model, make_review_model
from paicli.config.settings import load_settings


def model(tmp_path):
    settings = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path), "PAICLI_API_KEY": "k",
                                        "PAICLI_BASE_URL": "http://127.0.0.1:9/v1", "PAICLI_MODEL": "m"})
    return make_chat_model(settings)


def test_reasoning_is_replayed_on_tool_call_messages_only(tmp_path):
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {}, "id": "c1"}], additional_kwargs={"reasoning_content": "plan"}),
        ToolMessage("r", tool_call_id="c1"),
        AIMessage("answer", additional_kwargs={"reasoning_content": "final thoughts"}),
        HumanMessage("again"),
    ]
    sent = model(tmp_path)._get_request_payload(history)["messages"]
    assert sent[1]["reasoning_content"] == "plan"
    assert "reasoning_content" not in sent[3]


def test_usage_is_requested_when_streaming_and_retries_are_set(tmp_path):
    m = model(tmp_path)
    assert m.stream_usage is True and m.max_retries == 3


def test_a_stored_refused_call_with_raw_arguments_is_sent_as_a_json_object(tmp_path):
    # A session written before refused calls were stored as "{}": its raw, cut-off text and
    # missing name would make strict servers (Kimi, vLLM, llama.cpp) refuse every request.
    cut = '{"path": "important.py", "content": "def g(): ret'
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "c1"}],
                  invalid_tool_calls=[{"name": "write_file", "args": cut, "id": "c2", "error": None, "type": "invalid_tool_call"},
                                      {"name": None, "args": "[1]", "id": "c3", "error": None, "type": "invalid_tool_call"}]),
        ToolMessage("r", tool_call_id="c1"), ToolMessage("e", tool_call_id="c2"), ToolMessage("e", tool_call_id="c3"),
    ]
    calls = model(tmp_path)._get_request_payload(history)["messages"][1]["tool_calls"]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == \
        [("c1", "read_file", {"path": "a"}), ("c2", "write_file", {}), ("c3", "invalid_tool_call", {})]


def test_every_client_of_the_process_shares_one_tls_context(tmp_path):
    # Issue 30: the SDK would load the CA bundle for each model's sync and async client.
    settings = load_settings(tmp_path, {"PAICLI_HOME": str(tmp_path), "PAICLI_API_KEY": "k",
                                        "PAICLI_BASE_URL": "http://127.0.0.1:9/v1", "PAICLI_MODEL": "m"})
    main, reviewer = make_chat_model(settings), make_review_model(settings, 5.0)
    clients = [c for m in (main, reviewer) for c in (m.root_client._client, m.root_async_client._client)]
    assert len({id(c._transport._pool._ssl_context) for c in clients}) == 1
    # the SDK's own settings still hold per model
    assert reviewer.root_async_client.timeout == 5.0 and reviewer.root_async_client.max_retries == 0
    assert main.root_async_client.timeout == 300.0 and main.root_async_client.max_retries == 3
