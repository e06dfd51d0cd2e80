"""The fake OpenAI server speaks the wire format the real clients expect."""

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import openai
import pytest
from langchain_deepseek import ChatDeepSeek
from langchain_openai import ChatOpenAI

from paicli.nodes.guards.provider_errors import is_dropped_connection
from tests.support.openai_server import Disconnect, ErrorReply, FakeOpenAIServer, Hang, Reply, item_from_json

ROOT = Path(__file__).resolve().parents[2]
CONTEXT_OVERFLOW = {"error": {"code": "context_length_exceeded", "type": "invalid_request_error",
                              "message": "This model's maximum context length is 8192 tokens."}}
# openai ignores Retry-After: 0 (it only honours 0 < delay) and backs off ~0.5 s instead;
# retry-after-ms makes the retry immediate.
RETRY_NOW = {"Retry-After": "0", "retry-after-ms": "1"}


def openai_model(server: FakeOpenAIServer, **kw) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.base_url, api_key="x", model="m", stream_usage=True,
                      **{"max_retries": 0, **kw})


def merged(chunks):
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def post_raw(server: FakeOpenAIServer, body: dict) -> bytes:
    request = urllib.request.Request(f"{server.base_url}/chat/completions",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.read()


def test_streamed_text_arrives_in_pieces_with_usage():
    with FakeOpenAIServer([Reply("Hello there, world!", usage=(11, 7))]) as server:
        chunks = list(openai_model(server).stream("hi"))
    assert len([c for c in chunks if c.content]) > 1
    total = merged(chunks)
    assert total.content == "Hello there, world!"
    assert total.usage_metadata["input_tokens"] == 11
    assert total.usage_metadata["output_tokens"] == 7
    assert server.requests[0]["stream_options"] == {"include_usage": True}


def test_streamed_tool_call_deltas_assemble_into_tool_calls():
    reply = Reply("Reading.", tool_calls=[{"name": "read_file", "arguments": {"path": "a.txt"},
                                           "id": "c1"}])
    with FakeOpenAIServer([reply]) as server:
        total = merged(list(openai_model(server).stream("read a.txt")))
    assert total.tool_calls == [{"name": "read_file", "args": {"path": "a.txt"}, "id": "c1",
                                 "type": "tool_call"}]
    assert total.response_metadata["finish_reason"] == "tool_calls"


async def test_async_streaming_works_the_same():
    reply = Reply("", tool_calls=[{"name": "ls", "arguments": "{}"}])
    with FakeOpenAIServer([reply]) as server:
        chunks = [c async for c in openai_model(server).astream("list")]
    assert merged(chunks).tool_calls[0]["name"] == "ls"


def test_non_streaming_reply_carries_tool_calls_and_usage():
    reply = Reply("", tool_calls=[{"name": "grep", "arguments": {"pattern": "x"}}], usage=(5, 3))
    with FakeOpenAIServer([reply]) as server:
        message = openai_model(server).invoke("find x")
    assert message.tool_calls[0]["args"] == {"pattern": "x"}
    assert message.tool_calls[0]["id"] == "call_1_0"
    assert message.usage_metadata["total_tokens"] == 8


def test_unparsable_streamed_arguments_become_invalid_tool_calls():
    reply = Reply("", tool_calls=[{"name": "read_file", "arguments": '{"path": a.txt}'}])
    with FakeOpenAIServer([reply]) as server:
        total = merged(list(openai_model(server).stream("x")))
    assert total.tool_calls == []
    assert total.invalid_tool_calls[0]["args"] == '{"path": a.txt}'


def test_deepseek_client_keeps_reasoning_content_when_streaming_and_not():
    think = Reply("42", reasoning_content="let me think")
    with FakeOpenAIServer([think, think]) as server:
        model = ChatDeepSeek(api_base=server.base_url, api_key="x", model="m",
                             stream_usage=True, max_retries=0)
        streamed = merged(list(model.stream("q")))
        whole = model.invoke("q")
    assert streamed.additional_kwargs["reasoning_content"] == "let me think"
    assert whole.additional_kwargs["reasoning_content"] == "let me think"
    assert streamed.usage_metadata is not None


def test_context_length_exceeded_raises_bad_request_with_its_code():
    with FakeOpenAIServer([ErrorReply(400, CONTEXT_OVERFLOW)]) as server:
        with pytest.raises(openai.BadRequestError) as caught:
            openai_model(server, max_retries=2).invoke("huge")
    assert caught.value.code == "context_length_exceeded"
    assert len(server.requests) == 1


def test_rate_limit_is_retried_by_the_client_then_succeeds():
    busy = ErrorReply(429, {"error": {"message": "slow down", "type": "rate_limit"}}, RETRY_NOW)
    with FakeOpenAIServer([busy, Reply("finally")]) as server:
        assert openai_model(server, max_retries=1).invoke("x").content == "finally"
    assert len(server.requests) == 2
    server.assert_consumed()


def test_authentication_error_is_not_retried():
    denied = ErrorReply(401, {"error": {"message": "bad key", "type": "invalid_api_key"}})
    with FakeOpenAIServer([denied, Reply("unused")]) as server:
        with pytest.raises(openai.AuthenticationError):
            openai_model(server, max_retries=2).invoke("x")
    assert server.remaining() == 1


def test_exhausted_script_answers_500_once_and_counts_it():
    with FakeOpenAIServer([]) as server:
        with pytest.raises(openai.InternalServerError, match="script exhausted"):
            openai_model(server, max_retries=2).invoke("x")
    assert server.exhausted_hits == 1
    with pytest.raises(AssertionError, match="1 request"):
        server.assert_consumed()


def test_callable_item_builds_its_reply_from_the_request():
    def shout(request: dict) -> Reply:
        return Reply(request["messages"][-1]["content"].upper())

    with FakeOpenAIServer([shout]) as server:
        assert openai_model(server).invoke("quiet").content == "QUIET"


def test_hang_makes_the_client_time_out():
    with FakeOpenAIServer([Hang(30)]) as server:
        with pytest.raises(openai.APITimeoutError):
            openai_model(server, timeout=0.2).invoke("x")


def test_requests_record_bodies_and_headers():
    with FakeOpenAIServer([Reply("ok")]) as server:
        openai_model(server).invoke("hello")
    request = server.requests[0]
    assert request["messages"] == [{"role": "user", "content": "hello"}]
    assert request.headers["authorization"] == "Bearer x"


def test_raw_stream_follows_the_openai_event_order():
    reply = Reply("hi", tool_calls=[{"name": "ls", "arguments": {"dir": "."}, "id": "c1"}])
    with FakeOpenAIServer([reply]) as server:
        raw = post_raw(server, {"model": "m", "stream": True, "messages": [],
                                "stream_options": {"include_usage": True}})
    events = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    call_deltas = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
                   if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert call_deltas[0]["function"] == {"name": "ls", "arguments": ""}
    assert "".join(d["function"]["arguments"] for d in call_deltas) == '{"dir": "."}'
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


CUT = '{"path": "important.py", "content": "def g(): ret'


def test_a_stream_can_end_without_finish_reason_or_done():
    reply = Reply("", tool_calls=[{"name": "write_file", "arguments": CUT, "id": "w1"}],
                  finish_reason=None, done=False)
    with FakeOpenAIServer([reply, reply]) as server:
        raw = post_raw(server, {"model": "m", "stream": True, "messages": []})
        total = merged(list(openai_model(server).stream("x")))
    assert b"[DONE]" not in raw and b'"finish_reason": "' not in raw
    assert "finish_reason" not in total.response_metadata
    # The quirk the cut-off check exists for: LangChain completes the cut arguments.
    assert total.tool_calls[0]["args"] == {"path": "important.py", "content": "def g(): ret"}
    assert total.tool_call_chunks[0]["args"] == CUT


def test_a_reply_can_say_it_hit_the_length_limit():
    with FakeOpenAIServer([Reply("cut", finish_reason="length")]) as server:
        total = merged(list(openai_model(server).stream("x")))
    assert total.response_metadata["finish_reason"] == "length"


def test_a_stream_can_drop_its_connection_midway():
    with FakeOpenAIServer([Reply("a long answer that never ends", drop_after=2)]) as server:
        seen = []
        with pytest.raises(openai.APIConnectionError) as caught:
            for chunk in openai_model(server).stream("x"):
                seen.append(chunk)
    assert seen and is_dropped_connection(caught.value)


def test_a_request_can_be_dropped_without_an_answer():
    with FakeOpenAIServer([Disconnect(), Reply("second try")]) as server:
        with pytest.raises(openai.APIConnectionError) as caught:
            openai_model(server).invoke("x")
        assert is_dropped_connection(caught.value)
        assert openai_model(server).invoke("x").content == "second try"


def test_script_files_can_express_cut_and_dropped_replies():
    assert item_from_json({"content": "x", "finish_reason": None, "done": False, "drop_after": 3}) == \
        Reply("x", finish_reason=None, done=False, drop_after=3)
    assert item_from_json({"disconnect": True}) == Disconnect()
    assert item_from_json({"content": "x"}).finish_reason == "auto"


def test_models_endpoint_lists_a_model():
    with FakeOpenAIServer() as server:
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
            assert json.load(response)["data"][0]["id"] == "fake-model"


def test_echo_mode_answers_with_the_last_user_message_after_the_script():
    with FakeOpenAIServer([Reply("scripted")], echo=True) as server:
        model = openai_model(server)
        assert [model.invoke("a").content, model.invoke("hello b").content] == \
            ["scripted", "echo: hello b"]
    assert server.exhausted_hits == 0


@pytest.mark.process
def test_standalone_process_prints_ready_and_serves_its_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "from file"},
                                  {"error": 429, "body": {"error": {"message": "busy"}}}]))
    command = [sys.executable, "-m", "tests.support.openai_server", "--port", "0",
               "--script", str(script), "--echo"]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        try:
            word, base_url = proc.stdout.readline().split()
            model = ChatOpenAI(base_url=base_url, api_key="x", model="m", max_retries=0)
            assert word == "READY" and model.invoke("hi").content == "from file"
            with pytest.raises(openai.RateLimitError):
                model.invoke("again")
            assert model.invoke("third").content == "echo: third"
        finally:
            proc.terminate()  # SIGTERM: the server shuts down and exits 0
    assert proc.returncode == 0
