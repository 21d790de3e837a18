"""The ``openai`` provider: Chat Completions over httpx against any OpenAI-compatible server
(OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, Groq...), streaming or not.

The request is shaped by the server's ``ServerProfile``; the profile's name and every workaround
it caused are recorded in ``raw.request`` next to the exact body sent.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import EventSource

from inspector.core.errors import ProviderError
from inspector.core.provider import Completed, ProviderChunk
from inspector.core.records import RawExchange, StepRequest, StepResponse
from inspector.core.scenario import ModelConfig
from inspector.providers.http import (
    RETRYABLE_STATUSES,
    HttpSession,
    KeyringGet,
    Sleep,
    transport_error,
)
from inspector.providers.openai_stream import StreamAssembler
from inspector.providers.openai_wire import (
    OPENAI_BASE_URL,
    ServerProfile,
    base_url_without_fragment,
    build_body,
    completion_from_wire,
    select_profile,
)

NAME = "openai"
_SERVER_ERRORS = frozenset({500, 502, 503})


class OpenAIProvider:
    name = NAME

    def __init__(
        self,
        model: ModelConfig,
        *,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        keyring_get: KeyringGet | None = None,
        profile: ServerProfile | None = None,
    ) -> None:
        self.profile = profile or select_profile(model)
        self.model = model.model_copy(update={"base_url": base_url_without_fragment(model)})
        retry_statuses = RETRYABLE_STATUSES
        if not self.profile.retry_server_errors:
            retry_statuses = RETRYABLE_STATUSES - _SERVER_ERRORS
        self.http = HttpSession(
            self.model,
            provider=NAME,
            default_base_url=OPENAI_BASE_URL,
            client=client,
            sleep=sleep,
            rng=rng,
            reuse_after_error=self.profile.reuse_connection_after_error,
            keyring_get=keyring_get,
            retry_statuses=retry_statuses,
        )

    def prepare(self) -> None:
        """The blocking set-up (HTTP client, API key lookup), for a worker thread."""
        self.http.prepare()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        body, streaming, notes = build_body(request, self.model, self.profile)
        key = self.http.api_key()
        auth = {"authorization": f"Bearer {key}"} if key else {}
        if streaming:
            auth["accept"] = "text/event-stream"
        http_request = self.http.build_request("chat/completions", body, auth_headers=auth)
        async with self.http.open(http_request) as opened:
            raw_request = {
                "url": opened.request_url,
                "headers": opened.request_headers,
                "body": body,
                "server": self.profile.name,
                "notes": notes,
            }
            raw_response: dict[str, Any] = {"status": opened.response.status_code}
            content_type = opened.response.headers.get("content-type", "")
            if streaming and "text/event-stream" in content_type:
                assembler = StreamAssembler()
                raw_response["events"] = assembler.events
                seen = False
                try:  # inline rather than a helper generator: one layer less per event
                    async for sse in EventSource(opened.response).aiter_sse():
                        seen = True
                        for chunk in assembler.feed(sse.event, sse.data):
                            yield chunk
                        if assembler.done:
                            break
                except httpx.HTTPError as exc:
                    partial = assembler.partial_text
                    raise transport_error(exc, provider=NAME, partial_text=partial) from exc
                check_stream_end(assembler, seen)
                response = assembler.response()
            else:
                data = await _read_json(opened.response)
                raw_response["body"] = data
                response = _completion(data)
            warnings = ignored_tool_choice(request, response)
            if warnings:
                raw_response["warnings"] = warnings
            raw = RawExchange(request=raw_request, response=raw_response)
            yield Completed(response=response, raw=raw, transport_retries=opened.retries)


def check_stream_end(assembler: StreamAssembler, seen: bool) -> None:
    """How a stream ended decides between a reply and an error."""
    if not seen:
        raise ProviderError(
            f"{NAME}: the server answered 200 with an empty stream (llama.cpp does this when "
            'tool_choice is "required", or when the model picks a tool while streaming)',
            kind="EmptyStream",
        )
    if not assembler.done and assembler.finish_reason is None:
        error = ProviderError(
            f"{NAME}: the stream ended before the reply was complete (no finish_reason, no [DONE])",
            kind="StreamCutOff",
        )
        error.partial_text = assembler.partial_text
        raise error


async def _read_json(response: httpx.Response) -> Any:
    raw = await response.aread()
    if not raw.strip():
        raise ProviderError(
            f"{NAME}: the server answered {response.status_code} with an empty body",
            kind="EmptyResponse",
        )
    try:
        return json.loads(raw)
    except ValueError:
        snippet = " ".join(raw[:120].decode("utf-8", "replace").split())
        raise ProviderError(
            f"{NAME}: the reply is not JSON: {snippet!r}", kind="MalformedResponse"
        ) from None


def _completion(data: Any) -> StepResponse:
    try:
        return completion_from_wire(data)
    except ProviderError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        # ValueError covers pydantic's ValidationError: a field of an unexpected type.
        message = " ".join(str(exc).split())[:200]
        raise ProviderError(
            f"{NAME}: the reply does not look like a chat completion: {message}",
            kind="MalformedResponse",
        ) from None


def ignored_tool_choice(request: StepRequest, response: StepResponse) -> list[str]:
    """Says so when the server did not honour a forced tool_choice (the loop reacts; this just
    makes the cause visible in the raw record)."""
    choice = request.tool_choice
    called = [c.name for c in response.tool_calls]
    if choice == "required" and not called:
        return ['tool_choice was "required" but the server answered without a tool call']
    if isinstance(choice, dict):
        name = choice.get("name")
        if name not in called:
            got = ", ".join(called) or "no tool call"
            return [f"tool_choice forced {name!r} but the server answered with {got}"]
    return []
