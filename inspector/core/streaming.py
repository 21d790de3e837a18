"""Pumps a provider's stream into events, keeping what arrived so far for the record."""

from __future__ import annotations

from collections.abc import Callable

from inspector.core.errors import ProviderError
from inspector.core.events import EventSink, ReasoningDelta, TextDelta, ToolCallDelta
from inspector.core.provider import Completed, Provider, ReasoningChunk, TextChunk, ToolCallChunk
from inspector.core.records import Forced, StepRequest, StepResponse, ToolResult, Verdict

# The largest reply a step takes, in characters of text, reasoning and tool-call arguments
# together (docs/engine.md). Every character is held several times over (the stream's pieces, the
# joined text, the record, the store's rows): a 50 MB reply cost ~900 MB of memory. Past it the
# step ends ``error``, keeping the first ``KEPT_OF_TOO_LARGE`` characters of text.
MAX_REPLY_CHARS = 8 * 1024 * 1024
KEPT_OF_TOO_LARGE = 64 * 1024


class OpenStep:
    """A step in flight: what to record if the turn is cancelled or breaks mid-step."""

    def __init__(self, index: int, attempt: int, request: StepRequest, forced: Forced | None):
        self.index = index
        self.attempt = attempt
        self.request = request
        self.forced = forced
        self.text: list[str] = []
        self.response: StepResponse | None = None
        self.tool_results: list[ToolResult] = []
        self.verdicts: list[Verdict] = []
        self.ttft_ms: float | None = None


async def consume(
    provider: Provider,
    open_step: OpenStep,
    emit: EventSink,
    run_id: str,
    clock: Callable[[], float],
) -> Completed | None:
    """Streams ``open_step.request``; returns the final ``Completed`` (None when the stream ended
    without one). ``ProviderError`` and cancellation propagate; the text received so far stays in
    ``open_step.text`` either way."""
    index = open_step.index
    t0 = clock()
    completed: Completed | None = None
    size = 0
    async for chunk in provider.stream(open_step.request):
        if isinstance(chunk, Completed):  # always the last chunk of a stream
            completed = chunk
            continue
        if open_step.ttft_ms is None:
            open_step.ttft_ms = round((clock() - t0) * 1000, 3)
        size += len(chunk.arguments_delta if isinstance(chunk, ToolCallChunk) else chunk.text)
        if size > MAX_REPLY_CHARS:
            raise reply_too_large("".join(open_step.text))
        if isinstance(chunk, TextChunk):
            open_step.text.append(chunk.text)
            emit(TextDelta(run_id=run_id, index=index, text=chunk.text))
        elif isinstance(chunk, ReasoningChunk):
            emit(ReasoningDelta(run_id=run_id, index=index, text=chunk.text))
        elif isinstance(chunk, ToolCallChunk):
            emit(
                ToolCallDelta(
                    run_id=run_id,
                    index=index,
                    call_index=chunk.call_index,
                    id=chunk.id,
                    name=chunk.name,
                    arguments_delta=chunk.arguments_delta,
                )
            )
    if completed is not None and reply_size(completed.response) > MAX_REPLY_CHARS:
        raise reply_too_large(completed.response.text)  # a reply that came whole, not streamed
    return completed


def reply_size(response: StepResponse) -> int:
    """Characters of text, reasoning and tool-call arguments (as JSON) in a reply."""
    return (
        len(response.text)
        + len(response.reasoning or "")
        + sum(len(c.arguments_json()) for c in response.tool_calls)
    )


def reply_too_large(text: str) -> ProviderError:
    error = ProviderError(
        f"the reply is larger than {MAX_REPLY_CHARS:,} characters (the cap per model reply); "
        f"the step keeps the first {min(len(text), KEPT_OF_TOO_LARGE):,} characters of its text",
        kind="ReplyTooLarge",
    )
    error.partial_text = text[:KEPT_OF_TOO_LARGE]
    return error
