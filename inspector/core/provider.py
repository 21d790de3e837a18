"""The ``Provider`` protocol: a request goes in, streamed chunks come out, then one final response.

Providers raise ``ProviderError`` (never a transport library's exception) and must close their
stream promptly when the consuming task is cancelled.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from inspector.core.errors import last_line
from inspector.core.records import RawExchange, StepRequest, StepResponse


class _Chunk(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextChunk(_Chunk):
    kind: Literal["text"] = "text"
    text: str


class ReasoningChunk(_Chunk):
    kind: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallChunk(_Chunk):
    kind: Literal["tool_call"] = "tool_call"
    call_index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""


class Completed(_Chunk):
    """The last item of every stream: the whole response, assembled."""

    kind: Literal["completed"] = "completed"
    response: StepResponse
    raw: RawExchange | None = None
    transport_retries: int = 0


ProviderChunk = TextChunk | ReasoningChunk | ToolCallChunk | Completed


class Provider(Protocol):
    name: str

    def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        """Yield chunks as they arrive; the last one is ``Completed``."""
        ...


def system_in_conversation(provider: object) -> bool:
    """Whether ``provider`` can send a ``system`` message in the middle of a conversation (a
    provider says no with ``system_in_conversation = False``: Anthropic's Messages API has only
    the top-level ``system``)."""
    return bool(getattr(provider, "system_in_conversation", True))


async def close_provider(provider: object) -> None:
    """Closes a provider's connections when it has any (``aclose``); best effort — the run is
    already recorded, so a failure to close is reported on stderr, never raised."""
    aclose = getattr(provider, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception as exc:
        print(f"agent-inspector: closing the provider failed: {last_line(exc)}", file=sys.stderr)
