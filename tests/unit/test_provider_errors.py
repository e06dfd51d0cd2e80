import httpx
import openai
import pytest

from nodes.guards.provider_errors import describe_provider_error, is_context_overflow

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status_error(status, body):
    cls = {400: openai.BadRequestError, 401: openai.AuthenticationError}.get(status, openai.APIStatusError)
    return cls("Error code: %d" % status, response=httpx.Response(status, request=REQUEST), body=body)


@pytest.mark.parametrize(
    "body",
    [
        {"code": "context_length_exceeded", "message": "too big"},
        {"message": "This model's maximum context length is 65536 tokens."},
        {"message": "Input tokens exceed the configured limit of 128000"},
        {"message": "prompt is too long: 210000 tokens > 200000 maximum"},
    ],
)
def test_overflow_400s_are_recognised(body):
    assert is_context_overflow(status_error(400, body))


def test_other_errors_are_not_overflow():
    assert not is_context_overflow(status_error(400, {"message": "invalid tool schema"}))
    assert not is_context_overflow(status_error(429, {"message": "too many tokens per minute"}))
    assert not is_context_overflow(ValueError("context window"))


def test_messages_name_the_fix():
    assert "PAICLI_API_KEY" in describe_provider_error(status_error(401, {"message": "bad key"}))
    assert describe_provider_error(status_error(500, {"message": "boom"})) == "HTTP 500: boom"
    conn = openai.APIConnectionError(request=REQUEST)
    assert "PAICLI_BASE_URL" in describe_provider_error(conn)


def dropped(text: str) -> openai.APIConnectionError:
    """What openai raises when the transport fails: the transport's error is the cause."""
    try:
        try:
            raise httpx.RemoteProtocolError(text)
        except httpx.RemoteProtocolError as cause:
            raise openai.APIConnectionError(request=REQUEST) from cause
    except openai.APIConnectionError as exc:
        return exc


def test_a_dropped_connection_is_named_as_such_not_as_a_wrong_base_url():
    text = describe_provider_error(dropped("peer closed connection without sending complete message body"))
    assert "连接" in text and "中断" in text and "peer closed connection" in text
    assert "PAICLI_BASE_URL" not in text


def test_a_refused_connection_still_points_at_the_base_url():
    try:
        try:
            raise httpx.ConnectError("All connection attempts failed")
        except httpx.ConnectError as cause:
            raise openai.APIConnectionError(request=REQUEST) from cause
    except openai.APIConnectionError as exc:
        assert "PAICLI_BASE_URL" in describe_provider_error(exc)
