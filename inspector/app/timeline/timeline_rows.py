"""The timeline's rows laid out from a run's steps (``TimelineItemModel``'s one pass over up to
100,000 steps when a run is opened): an attempt header before each attempt's first shown
step, a row per step, a row per note under it.

``take`` reads each ``LiveStep``; ``take_light`` lays out the same rows from a light run's
columns (``core/lazy_steps.StepRows``: attempt, cleared, which steps have notes) and builds
only the steps that have notes, so opening a long stored run builds ~30 steps for its first
page, not 100,000. ``lay_out_light`` runs it on a worker thread before the run is shown
(``stored_open``), so the UI thread only adopts the rows (``TimelineItemModel.prepare``).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.lazy_steps import StepRows
from inspector.core.live import LiveStep
from inspector.core.revalidate import Flip
from inspector.reports.step_notes import note_count

# A note row's entry in the rows array: its step's index plus k * NOTE for the step's k-th note.
NOTE = 1 << 32


@dataclass(slots=True)
class Attempt:
    first: int  # first step index
    last: int  # last step index so far
    cleared: bool = False
    number: int = 0


def take(
    new_steps: Sequence[LiveStep],
    rows: array[int],
    last_attempt: int,
    base: int,
    attempts: dict[int, Attempt],
    row_of: array[int],
    show_cleared: bool,
    slowest: float,
    flips: dict[int, list[Flip]],
) -> float:
    """Appends rows for ``new_steps`` (the run's next steps, in order) to ``rows``, which will
    start at row ``base``; ``last_attempt`` is the attempt of the row before them. Fills
    ``attempts`` and ``row_of``; returns the slowest latency, ``slowest`` included."""
    # One pass over up to 100,000 steps on opening a run: locals, no method calls.
    append = rows.append
    info: Attempt | None = None
    for live in new_steps:
        attempt, index = live.attempt, live.index
        if info is None or info.number != attempt:
            info = attempts.get(attempt)
            if info is None:
                info = attempts[attempt] = Attempt(index, index, live.cleared, attempt)
        info.last = index
        if live.cleared:
            info.cleared = True
        step = live.step
        if step is not None and step.latency_ms is not None and step.latency_ms > slowest:
            slowest = step.latency_ms
        if not show_cleared and live.cleared:
            continue
        if attempt != last_attempt:
            append(-attempt)
            last_attempt = attempt
        row_of[index] = base + len(rows)
        append(index)
        # Most steps have nothing to note: a few attribute reads, no call.
        if (
            live.verdicts
            or live.feedback
            or live.forced is not None
            or (step is not None and step.error)
            or (flips and index in flips)
        ):
            for number in range(1, note_count(live, flips.get(index, ())) + 1):
                append(index + number * NOTE)
    return slowest


def take_light(
    light: StepRows,
    steps: Sequence[LiveStep],
    rows: array[int],
    attempts: dict[int, Attempt],
    row_of: array[int],
    show_cleared: bool,
    flips: dict[int, list[Flip]],
) -> float:
    """``take`` of a whole light run (``steps``, the ``LiveStep`` view of ``light``) into the
    empty ``rows``: the same rows, read from ``light``'s columns; only the steps with notes
    the store did not count (a forced request) or with flips are built. Returns the slowest
    latency."""
    append = rows.append
    noted = set(light.noted).union(index - 1 for index in flips)
    last_attempt = 0
    info: Attempt | None = None
    for position, (attempt, cleared) in enumerate(zip(light.attempts, light.cleared, strict=True)):
        index = position + 1
        if info is None or info.number != attempt:
            info = attempts.get(attempt)
            if info is None:
                info = attempts[attempt] = Attempt(index, index, bool(cleared), attempt)
        info.last = index
        if cleared:
            info.cleared = True
            if not show_cleared:
                continue
        if attempt != last_attempt:
            append(-attempt)
            last_attempt = attempt
        row_of[index] = len(rows)
        append(index)
        if position in noted:
            count = -1 if index in flips else light.note_count(position)
            if count < 0:
                count = note_count(steps[position], flips.get(index, ()))
            for number in range(1, count + 1):
                append(index + number * NOTE)
    return light.slowest


@dataclass(slots=True)
class LightLayout:
    """``take_light``'s rows of a light run with no flips, laid out off the UI thread."""

    light: StepRows
    show_cleared: bool
    rows: array[int]
    attempts: dict[int, Attempt]
    row_of: array[int]
    slowest: float


def lay_out_light(light: StepRows, steps: Sequence[LiveStep], show_cleared: bool) -> LightLayout:
    """``take_light`` into fresh containers (a worker thread may run it: nothing shared)."""
    rows, row_of = array("q"), array("q", [-1]) * (len(steps) + 1)
    attempts: dict[int, Attempt] = {}
    slowest = take_light(light, steps, rows, attempts, row_of, show_cleared, {})
    return LightLayout(light, show_cleared, rows, attempts, row_of, slowest)
