"""A run's events as JSON Lines: one object per line, every line versioned.

Line 1 is a header: ``{"version", "kind": "header", "run_id", "record_version", "scenario",
"status", "events", "synthesized", "exported_by"}``. Every following line is one event:
``{"version", "t_ms", **event}`` — the event's own dump (its ``kind`` included), so a reader
parses it back with ``EVENT_ADAPTER``. ``t_ms`` is milliseconds from the run's start.
``synthesized: true`` says the events were rebuilt from the record (no event log was stored).
Credentials are redacted (``inspector.reports.redact``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from inspector import __version__
from inspector.core.events import Event
from inspector.core.records import RunRecord
from inspector.reports import EXPORT_VERSION
from inspector.reports.redact import redact, scrub_keys


class Timed(Protocol):
    """An event with its time (``StoredEvent`` from the store, ``TimedEvent`` synthesized)."""

    @property
    def t_ms(self) -> float: ...

    @property
    def event(self) -> Event: ...


def header(record: RunRecord, events: Sequence[Timed], *, synthesized: bool) -> dict[str, Any]:
    return {
        "version": EXPORT_VERSION,
        "kind": "header",
        "run_id": record.run_id,
        "record_version": record.version,
        "scenario": record.scenario,
        "status": record.status,
        "events": len(events),
        "synthesized": synthesized,
        "exported_by": f"agent-inspector {__version__}",
    }


def event_line(timed: Timed) -> dict[str, Any]:
    dump = timed.event.model_dump(mode="json")
    return {"version": EXPORT_VERSION, "t_ms": timed.t_ms, **dump}


def jsonl_lines(
    record: RunRecord, events: Sequence[Timed], *, synthesized: bool = False
) -> Iterator[str]:
    """The export, line by line (each without its newline), produced as it is written."""
    yield _dumps(header(record, events, synthesized=synthesized))
    for timed in events:
        yield _dumps(event_line(timed))


def _dumps(obj: dict[str, Any]) -> str:
    return scrub_keys(json.dumps(redact(obj), ensure_ascii=False, separators=(",", ":")))
