import httpx
import openai
import pytest

from paicli.nodes.guards.provider_errors import describe_provider_error, is_context_overflow

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
    assert describe_provider_error(status_error(500, {"message": "boom"})) == (
        "HTTP 500: boom（模型服务内部出错；这是服务端的问题，请稍后再试，或用 /model 换一个模型）")
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
    assert text == "与模型服务的连接在响应完成前中断：服务端在响应发完之前关闭了连接（RemoteProtocolError）；请稍后再试"
    assert "PAICLI_BASE_URL" not in text  # issue 41: in Chinese, the transport's type for the logs


def test_a_refused_connection_still_points_at_the_base_url():
    try:
        try:
            raise httpx.ConnectError("All connection attempts failed")
        except httpx.ConnectError as cause:
            raise openai.APIConnectionError(request=REQUEST) from cause
    except openai.APIConnectionError as exc:
        assert "PAICLI_BASE_URL" in describe_provider_error(exc)


def test_after_the_last_retry_one_line_says_the_status_what_it_means_the_retries_and_what_to_do():
    """Issue 41: the SDK's retry count of the last request is the number of retries made."""
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions", headers={"x-stainless-retry-count": "3"})
    error = openai.RateLimitError("Error code: 429", response=httpx.Response(429, request=request),
                                  body={"message": "rate limited"})
    assert describe_provider_error(error) == ("HTTP 429: rate limited（请求过于频繁，或账户额度已用完，已重试 3 次；"
                                              "请稍等片刻再试，或检查账户的额度与限流）")
    try:
        try:
            raise httpx.ConnectError("[Errno 111] Connection refused")
        except httpx.ConnectError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as exc:
        assert describe_provider_error(exc) == ("无法连接到模型服务：连接被拒绝（该地址没有服务在监听）（ConnectError），"
                                                "已重试 3 次；请检查 PAICLI_BASE_URL 与网络")
