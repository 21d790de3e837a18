"""When each recorded event of a playback is due, and where stepping stops (pure: no Qt).

A playback applies a run's recorded events in order; ``position`` counts the events applied
(0: none, ``len(schedule)``: all). Times are the recorded offsets from the run's start (``t_ms``),
with two changes for demos:

- Idle gaps are capped: a gap between two events longer than ``IDLE_CAP_MS`` (2 s of recorded
  time: a slow model, a tool waiting) is played as ``IDLE_CAP_MS``, so a demo never sits idle.
  The cap applies before the speed, so at 0.25× the longest wait is 8 s, at 4× 0.5 s.
- Stepping skips over streams: the deltas one step streams in a row (text, reasoning, tool-call
  arguments) count as one step, so a step forward shows a whole streamed answer and the next one
  its verdict, its feedback, its clearing, its end.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from inspector.core.events import Event

IDLE_CAP_MS = 2000.0
# (label, factor); None: as fast as the window can take them.
SPEEDS: tuple[tuple[str, float | None], ...] = (
    ("0.25×", 0.25),
    ("0.5×", 0.5),
    ("1×", 1.0),
    ("2×", 2.0),
    ("4×", 4.0),
    ("8×", 8.0),
    ("max", None),
)
DEFAULT_SPEED = "1×"
DELTA_KINDS = frozenset({"text_delta", "reasoning_delta", "tool_call_delta"})


class Timed(Protocol):
    """A recorded event and its offset from the run's start (``StoredEvent``, ``TimedEvent``)."""

    @property
    def t_ms(self) -> float: ...

    @property
    def event(self) -> Event: ...


def speed_factor(label: str) -> float | None:
    """The factor of a ``SPEEDS`` label (``KeyError`` for an unknown one)."""
    return dict(SPEEDS)[label]


def _delta_step(event: Event) -> int | None:
    """The step a streamed delta belongs to; None for every other event."""
    return getattr(event, "index", None) if event.kind in DELTA_KINDS else None


@dataclass(frozen=True)
class Schedule:
    times: tuple[float, ...]  # recorded t_ms of each event
    played: tuple[float, ...]  # the same with idle gaps capped: the playback's own clock
    stops: tuple[int, ...]  # the positions stepping lands on, ascending, 0 and len included

    @classmethod
    def of(cls, events: Sequence[Timed]) -> Schedule:
        times = tuple(float(e.t_ms) for e in events)
        played: list[float] = []
        for i, t in enumerate(times):
            gap = 0.0 if i == 0 else max(0.0, t - times[i - 1])
            played.append((played[-1] if played else 0.0) + min(gap, IDLE_CAP_MS))
        steps = [_delta_step(e.event) for e in events]
        stops = [0]
        for position in range(1, len(events)):
            before, after = steps[position - 1], steps[position]
            if before is None or before != after:  # not inside one step's stream
                stops.append(position)
        if events:
            stops.append(len(events))
        return cls(times, tuple(played), tuple(stops))

    def __len__(self) -> int:
        return len(self.times)

    @property
    def duration_ms(self) -> float:
        """The recorded time of the last event."""
        return self.times[-1] if self.times else 0.0

    def elapsed_ms(self, position: int) -> float:
        """The recorded time the view has reached after ``position`` events."""
        return self.times[position - 1] if position > 0 else 0.0

    def due_ms(self, start: int, position: int, speed: float | None) -> float:
        """When event ``position`` is due, in ms after playing (re)started at ``start`` (the
        event at ``start`` is due after its own gap; the very first event at once)."""
        if speed is None or position >= len(self):
            return 0.0
        base = self.played[start - 1] if start > 0 else self.played[0]
        return max(0.0, self.played[position] - base) / speed

    def next_stop(self, position: int) -> int:
        """Where a step forward from ``position`` lands (``len`` at the end)."""
        i = bisect.bisect_right(self.stops, position)
        return self.stops[i] if i < len(self.stops) else len(self)

    def previous_stop(self, position: int) -> int:
        """Where a step back from ``position`` lands (0 at the start)."""
        i = bisect.bisect_left(self.stops, position)
        return self.stops[i - 1] if i > 0 else 0


def clock_text(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def position_text(schedule: Schedule, position: int) -> str:
    """``event 12 / 80 · 1.4 s / 3.2 s`` (recorded time, not the capped one)."""
    total = len(schedule)
    return (
        f"event {position} / {total} · "
        f"{clock_text(schedule.elapsed_ms(position))} / {clock_text(schedule.duration_ms)}"
    )
