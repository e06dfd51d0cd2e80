"""The chat model factory: any OpenAI-compatible endpoint through langchain.

We use ``ChatDeepSeek`` (langchain-deepseek) for every provider because it already reads
``reasoning_content`` from responses and stream deltas, on any ``api_base``. What it lacks is
sending reasoning back: DeepSeek and GLM want ``reasoning_content`` replayed on assistant
messages that carry tool calls (reference h.2 "Reasoning"), so ``_get_request_payload`` adds it.
Final answers are sent without their reasoning, as the reference's delivery view does.

Every past tool call goes out with a JSON-object arguments string and a name: servers such as
Kimi, vLLM and llama.cpp reject the whole request otherwise, and a session stored before refused
calls were kept as ``{}`` (``paicli.nodes.guards.cutoff``) may still hold a cut-off call's raw text.

Cached input tokens are read in every provider's spelling, and Kimi's streamed usage in
``choices[0].usage`` is read too, counted once (``paicli.run.cache_usage``).

Retries: the openai client retries 408/409/429/5xx and connection errors with exponential
backoff, honouring ``Retry-After``; 400 and 401 are never retried. We set the count, and its
clients say each retry as it waits (``paicli.run.retries``, issue 41).

TLS: every client of the process shares one context, made as the openai SDK makes its own
(``_tls_context``). Left to itself the SDK loads the CA bundle for each model's sync and async
client, tens of milliseconds each, before the first request (issue 30).
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_deepseek import ChatDeepSeek

from paicli.nodes.guards.cutoff import NAMELESS, REFUSED_ARGUMENTS
from paicli.run.cache_usage import CHOICE_USAGE, StreamUsage, choice_usage, record_cache_read, response_usage
from paicli.config.settings import Settings

MAX_RETRIES = 3  # reference (x): LLM retry, 3 attempts for 408/429/5xx
REQUEST_TIMEOUT = 300.0  # seconds for one streamed completion


class ReasoningChatModel(ChatDeepSeek):
    """ChatDeepSeek that replays ``reasoning_content`` on tool-call assistant messages."""

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        messages = self._convert_input(input_).to_messages()
        # Only a stored invalid call can carry raw argument text (langchain-openai dumps valid
        # calls' dicts itself), so only those are parsed: not every past call on every request.
        invalid = {c.get("id") for m in messages if isinstance(m, AIMessage) for c in m.invalid_tool_calls}
        for sent in payload.get("messages", []):
            if sent.get("role") == "assistant":
                for call in sent.get("tool_calls") or []:
                    replayable(call, check_arguments=call.get("id") in invalid)
        if len(messages) != len(payload["messages"]):
            return payload  # the base class merged or dropped something; leave it alone
        for source, sent in zip(messages, payload["messages"]):
            reasoning = source.additional_kwargs.get("reasoning_content") if isinstance(source, AIMessage) else None
            if reasoning and sent.get("role") == "assistant" and sent.get("tool_calls"):
                sent["reasoning_content"] = reasoning
        return payload

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> Any:
        result = super()._create_chat_result(response, generation_info)
        for generation in result.generations:
            record_cache_read(generation.message, response_usage(response))
        return result

    def _convert_chunk_to_generation_chunk(self, chunk: dict, default_chunk_class: type,
                                           base_generation_info: dict | None) -> Any:
        generation = super()._convert_chunk_to_generation_chunk(chunk, default_chunk_class, base_generation_info)
        if generation is not None and (thinking := _thinking_delta(chunk)):  # a provider's other spelling
            generation.message.additional_kwargs.setdefault("reasoning_content", thinking)
        if generation is not None:  # usage comes in the last chunk, which has no choices
            record_cache_read(generation.message, response_usage(chunk))
            if (usage := choice_usage(chunk)) is not None:  # Kimi's: held by _stream / _astream
                generation.generation_info = {**(generation.generation_info or {}), CHOICE_USAGE: usage}
        return generation

    def _stream(self, messages: Any, stop: list[str] | None = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        usage = StreamUsage()
        for generation in super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs):
            yield usage.see(generation)
        for generation in self._trailing_usage(usage):
            if run_manager:
                run_manager.on_llm_new_token("", chunk=generation)
            yield generation

    async def _astream(self, messages: Any, stop: list[str] | None = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        usage = StreamUsage()
        async for generation in super()._astream(messages, stop=stop, run_manager=run_manager, **kwargs):
            yield usage.see(generation)
        for generation in self._trailing_usage(usage):
            if run_manager:
                await run_manager.on_llm_new_token("", chunk=generation)
            yield generation

    def _trailing_usage(self, usage: StreamUsage) -> list[ChatGenerationChunk]:
        """The usage-only chunk OpenAI would have sent for usage a stream gave in its choice only."""
        chunk = usage.trailing_chunk()
        generation = None if chunk is None else self._convert_chunk_to_generation_chunk(chunk, AIMessageChunk, None)
        return [] if generation is None else [generation]

    @property
    def _llm_type(self) -> str:
        return "paicli-openai-compatible"


def _thinking_delta(chunk: dict) -> str | None:
    """Reasoning a provider streams as ``delta.thinking`` (langchain-deepseek reads
    ``reasoning_content`` and ``reasoning`` itself)."""
    choices = chunk.get("choices") or [{}]
    thinking = (choices[0].get("delta") or {}).get("thinking") if isinstance(choices[0], dict) else None
    return thinking if isinstance(thinking, str) and thinking else None


def replayable(call: dict, check_arguments: bool = True) -> None:
    """Make one outgoing past call acceptable to strict servers, in place."""
    function = call.get("function")
    if not isinstance(function, dict):
        return
    if not isinstance(function.get("name"), str) or not function["name"]:
        function["name"] = NAMELESS
    if check_arguments and not _is_json_object(function.get("arguments")):
        function["arguments"] = REFUSED_ARGUMENTS


def _is_json_object(text: Any) -> bool:
    try:
        return isinstance(text, str) and isinstance(json.loads(text), dict)
    except ValueError:
        return False


REVIEW_MAX_TOKENS = 400  # a one-line JSON verdict


def make_review_model(settings: Settings, timeout: float) -> ReasoningChatModel:
    """The auto reviewer's client (reference v.2): the session's provider, PAICLI_AUTO_CLASSIFIER_MODEL
    or the session's model, thinking off, no retries (its own timeout bounds it)."""
    # reference v.2: thinking off, where the catalog says how (an unknown endpoint may refuse unknown fields)
    provider = settings.catalog.get(settings.provider)
    extra = provider.thinking_off if provider else None
    return make_chat_model(settings, settings.review_model or settings.model, timeout=timeout, max_retries=0,
                           max_tokens=REVIEW_MAX_TOKENS, **({"extra_body": extra} if extra else {}))


def make_chat_model(settings: Settings, model: str | None = None, **overrides: Any) -> ReasoningChatModel:
    """Build the chat model for ``settings`` (``model`` overrides the model id, e.g. light model)."""
    options: dict[str, Any] = dict(
        model=model or settings.model,
        api_key=settings.require_key(),
        api_base=settings.base_url,
        stream_usage=True,  # off by default with a custom base_url (langgraph-notes §6.2)
        max_retries=MAX_RETRIES,
        timeout=REQUEST_TIMEOUT,
    )
    options.update(overrides)
    # The SDK's own clients and defaults, with the process's one TLS context.
    options.setdefault("http_client", openai.DefaultHttpxClient(verify=_tls_context()))
    options.setdefault("http_async_client", openai.DefaultAsyncHttpxClient(verify=_tls_context()))
    from paicli.run.retries import clients

    return ReasoningChatModel(**options, **clients(options))


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The context the SDK would make for each client (system CAs, ``SSL_CERT_FILE``), made once."""
    from langchain_openai._compat import httpx  # httpx or httpx2: the library of the installed SDK

    return httpx.create_ssl_context()
