"""The Anthropic Messages API provider (``model.provider = "anthropic"``).

``base_url`` defaults to ``https://api.anthropic.com/v1`` (requests go to ``{base_url}/messages``);
the key is read from ``api_key_env`` (default ``ANTHROPIC_API_KEY``) or the OS keyring and sent as
``x-api-key`` only. Retries, timeouts and error mapping are the shared HTTP layer's
(``inspector.providers.http``); an ``error`` event (``overloaded_error``...) that arrives before
any content is retried here too, on the same budget. Thinking blocks a response carries are
remembered by this instance (one turn) and sent back with the assistant message they belong to.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx

from inspector.core.errors import ProviderError
from inspector.core.provider import Completed, ProviderChunk
from inspector.core.records import RawExchange, StepRequest
from inspector.core.scenario import ModelConfig
from inspector.providers.anthropic_stream import StreamAssembler, stream_events
from inspector.providers.anthropic_wire import (
    ANTHROPIC_VERSION,
    Block,
    ParsedMessage,
    build_body,
    parse_message,
    thinking_keys,
)
from inspector.providers.http import HttpSession, KeyringGet, Opened, Sleep, transport_error

__all__ = ["DEFAULT_API_KEY_ENV", "DEFAULT_BASE_URL", "AnthropicProvider"]

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider:
    """Streams one Messages API call per step (or makes one plain call with ``stream = false``)."""

    name = "anthropic"
    # The Messages API has a top-level system prompt only: system-role feedback is sent (and
    # recorded) as user feedback (core.history.effective_policy).
    system_in_conversation = False

    def __init__(
        self,
        model: ModelConfig,
        *,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        keyring_get: KeyringGet | None = None,
    ) -> None:
        self.model = model.model_copy(
            update={"api_key_env": model.api_key_env or DEFAULT_API_KEY_ENV}
        )
        self.session = HttpSession(
            self.model,
            provider=self.name,
            default_base_url=DEFAULT_BASE_URL,
            client=client,
            sleep=sleep,
            rng=rng,
            keyring_get=keyring_get,
        )
        self._thinking: dict[str, tuple[Block, ...]] = {}

    def prepare(self) -> None:
        """The blocking set-up (HTTP client, API key lookup), for a worker thread."""
        self.session.prepare()

    async def aclose(self) -> None:
        await self.session.aclose()

    def request_body(self, request: StepRequest) -> dict[str, Any]:
        """The JSON body this provider sends for ``request`` (thinking blocks remembered so far
        included)."""
        return build_body(request, self.model, stream=self.model.stream, thinking=self._thinking)

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        key = self.session.api_key()  # raises, naming the variable, when the key is nowhere
        if key:
            headers["x-api-key"] = key
        if not any(k.lower() == "anthropic-version" for k in self.model.headers):
            headers["anthropic-version"] = ANTHROPIC_VERSION
        if self.model.stream:
            headers["accept"] = "text/event-stream"
        return headers

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        body = self.request_body(request)
        http_request = self.session.build_request("messages", body, auth_headers=self._headers())
        retries = 0  # across every attempt: the HTTP layer's and this method's own
        while True:
            opened_ok = delivered = False
            try:
                async with self.session.open(http_request) as opened:
                    opened_ok = True
                    retries += opened.retries
                    content_type = opened.response.headers.get("content-type", "")
                    if "text/event-stream" not in content_type:
                        # also a gateway that answers a stream request with one JSON message
                        parsed, raw_response = await _read_message(opened)
                    else:
                        assembler = StreamAssembler()
                        try:
                            async for chunk in stream_events(opened.response, assembler):
                                delivered = True
                                yield chunk
                        except httpx.HTTPError as exc:
                            raise transport_error(
                                exc, provider=self.name, partial_text=assembler.partial_text
                            ) from exc
                        parsed = parse_message(assembler.message())
                        raw_response = {
                            "status": opened.response.status_code,
                            "events": assembler.events,
                        }
                    raw = RawExchange(request=_raw_request(opened, body), response=raw_response)
            except ProviderError as exc:
                if not opened_ok:  # the layer's retries before it gave up
                    retries += exc.transport_retries
                if delivered or not self._retry_stream_error(exc, retries):
                    exc.transport_retries = retries
                    raise
                delay = self.session.retry.delay(retries, None, self.session.rng)
                await self.session.sleep(delay)
                retries += 1
                continue
            self._remember(parsed)
            yield Completed(response=parsed.response, raw=raw, transport_retries=retries)
            return

    def _retry_stream_error(self, exc: ProviderError, retries: int) -> bool:
        return (
            exc.kind == "StreamErrorEvent"
            and exc.retryable
            and retries < self.session.retry.max_retries
        )

    def _remember(self, parsed: ParsedMessage) -> None:
        if parsed.thinking:
            response = parsed.response
            for key in thinking_keys(response.text or None, response.tool_calls):
                self._thinking[key] = parsed.thinking


def _raw_request(opened: Opened, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": "POST",
        "url": opened.request_url,
        "headers": opened.request_headers,
        "body": body,
    }


async def _read_message(opened: Opened) -> tuple[ParsedMessage, dict[str, Any]]:
    content = await opened.response.aread()
    try:
        data = json.loads(content)
    except ValueError:
        text = content[:200].decode("utf-8", "replace")
        raise ProviderError(
            f"anthropic: the response is not JSON: {' '.join(text.split())!r}",
            kind="MalformedResponse",
        ) from None
    return parse_message(data), {"status": opened.response.status_code, "body": data}
