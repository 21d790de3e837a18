"""What the store hands out besides ``RunRecord``: run summaries and stored events."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, field_validator

from inspector.core.errors import BadInputError, InspectorError
from inspector.core.events import Event


class RunNotFound(InspectorError):
    """The run asked for cannot be read: ``UnknownRun``, or ``RunStillRecording`` (no final
    record yet)."""


class UnknownRun(RunNotFound, BadInputError):
    """No run (or no single run) matches the id or prefix asked for: bad input (CLI exit 2)."""


class RunSummary(BaseModel):
    """One line of ``agent-inspector runs``: the run row's indexed columns, no steps loaded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    scenario: str
    status: str  # a RunStatus, or "running" while its writer is alive
    termination: str | None
    started_at: str
    duration_ms: float
    steps: int
    input_tokens: int
    output_tokens: int
    replay_of: str | None
    provider: str
    model: str
    # "proxy" for a run recorded by the recording proxy (the window's badge); absent otherwise.
    via: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # The run's --set overrides (from its header): what differs from the scenario as written.
    overrides: list[str] = Field(default_factory=list)

    @field_validator("overrides", mode="before")
    @classmethod
    def _from_json(cls, value: object) -> object:
        return json.loads(value) if isinstance(value, str) else value


class StoredEvent(BaseModel):
    """An engine event as recorded, with its offset from the run's start."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    t_ms: float
    event: Event


class PlainEvent:
    """A stored event and its offset, as ``Store.event_stream`` gives it: a plain class (a
    ``StoredEvent`` validates nothing more and costs more, 20,000 times for a long run)."""

    __slots__ = ("event", "t_ms")

    def __init__(self, t_ms: float, event: Event) -> None:
        self.t_ms = t_ms
        self.event = event


class AsStored:
    """A stored event with the JSON its recorder wrote (``Store.events_as_stored``):
    ``stored_json`` is ``event.model_dump_json(exclude={"run_id"})`` (a body of ``TEXT_MIN``
    characters or more: that value written again by ``messages.dumps``), inline: no reference
    to its step or to a large text. A plain class: 40,000 of them for a 10,000-step turn."""

    __slots__ = ("event", "stored_json", "t_ms")

    def __init__(self, t_ms: float, event: Event, stored_json: str) -> None:
        self.t_ms = t_ms
        self.event = event
        self.stored_json = stored_json
