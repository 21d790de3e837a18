"""One upstream reply as the proxy sees it pass: the bytes go to the client untouched, and this
folds them into the step's response (streamed or not, either API) and its raw record.

The parsers are the providers' own (``openai_stream`` / ``anthropic_stream`` assemblers and the
non-streaming readers), so a proxied step is read exactly as an engine step would be.
"""

from __future__ import annotations

import json
from typing import Any

from inspector.core.errors import ProviderError
from inspector.core.provider import ProviderChunk
from inspector.core.records import StepResponse
from inspector.providers import anthropic_stream, anthropic_wire, openai_stream, openai_wire
from inspector.providers.http import provider_message
from inspector.proxy.normalize import Api
from inspector.proxy.sse import SSEDecoder

__all__ = ["ReplyCapture"]


class ReplyCapture:
    """Feed it the reply's bytes in order; ``finish()`` reads the whole.

    A stream is parsed as it passes (its chunks become live events); a parse problem does not
    stop the forwarding — it is kept and reported on the step when the reply ends."""

    def __init__(self, api: Api, status: int, content_type: str) -> None:
        self.api = api
        self.status = status
        self.streamed = status < 400 and "text/event-stream" in content_type
        self._body: list[bytes] = []
        self._sse = SSEDecoder() if self.streamed else None
        self._openai = openai_stream.StreamAssembler() if api == "openai" else None
        self._anthropic = anthropic_stream.StreamAssembler() if api == "anthropic" else None
        self.problem: ProviderError | None = None

    @property
    def partial_text(self) -> str:
        assembler = self._openai or self._anthropic
        return assembler.partial_text if assembler is not None else ""

    @property
    def complete(self) -> bool:
        """A stream whose reply is whole (``[DONE]`` / a finish reason, ``message_stop``):
        clients such as the openai SDK hang up right there, and that is no cancellation."""
        if self._sse is None or self.problem is not None:
            return False
        if self._openai is not None:
            return self._openai.done or self._openai.finish_reason is not None
        return self._anthropic is not None and self._anthropic.stopped

    def feed(self, chunk: bytes) -> list[ProviderChunk]:
        if self._sse is None:
            self._body.append(chunk)
            return []
        out: list[ProviderChunk] = []
        for event, data in self._sse.feed(chunk):
            if self.problem is not None:
                continue
            try:
                if self._openai is not None:
                    out += self._openai.feed(event, data)
                elif self._anthropic is not None:
                    out += self._anthropic.feed(event, data)
            except ProviderError as exc:
                self.problem = exc
        return out

    def raw_response(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"status": self.status}
        if self._sse is not None:
            assembler = self._openai or self._anthropic
            raw["events"] = assembler.events if assembler is not None else []
            return raw
        body = b"".join(self._body)
        try:
            raw["body"] = json.loads(body)
        except ValueError:
            raw["body"] = body.decode("utf-8", "replace")
        return raw

    def finish(self) -> StepResponse:
        """The response the reply adds up to; ``ProviderError`` for an error status, a stream
        that ended early or a body that is not a reply (the step's ``error``)."""
        if self.status >= 400:
            body = b"".join(self._body)
            raise ProviderError(
                f"{self.api}: HTTP {self.status}: {provider_message(body)}", status=self.status
            )
        if self.problem is not None:
            raise self.problem
        if self._openai is not None and self.streamed:
            openai_stream_end(self._openai)
            return self._openai.response()
        if self._anthropic is not None and self.streamed:
            if not self._anthropic.stopped:
                raise ProviderError(
                    "anthropic: the stream ended before message_stop", kind="StreamCutOff"
                )
            return anthropic_wire.parse_message(self._anthropic.message()).response
        data = self.raw_response()["body"]
        try:
            if self.api == "openai":
                return openai_wire.completion_from_wire(data)
            return anthropic_wire.parse_message(data).response
        except ProviderError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            raise ProviderError(
                f"{self.api}: the reply is not a model reply: {' '.join(str(exc).split())[:200]}",
                kind="MalformedResponse",
            ) from None


def openai_stream_end(assembler: openai_stream.StreamAssembler) -> None:
    if not assembler.done and assembler.finish_reason is None:
        raise ProviderError(
            "openai: the stream ended before the reply was complete (no finish_reason, no [DONE])",
            kind="StreamCutOff",
        )
