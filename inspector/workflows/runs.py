"""Reading a recorded run back, as the export command, playback and the window's views need it:
its events as recorded, or rebuilt from the record when it was stored without them (an import),
and a run another process is still recording as far as it got (docs/store.md).

Blocking: the window calls these on a worker thread, each with a ``Store`` of that thread's own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.lazy_steps import (
    RELEASE_BUILT,
    RELEASE_PAUSE_S,
    LightParts,
    light_rows,
    light_run,
    light_steps,
)
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Step
from inspector.reports.synthetic_events import TimedEvent, events_from_record
from inspector.store import RunStillRecording, Store


def events_or_rebuilt(store: Store, record: RunRecord) -> tuple[list[TimedEvent], bool]:
    """``record``'s events and whether they were rebuilt (``synthesized``): the stored event log,
    else, for a run stored without one, events made from the record (the exports say so)."""
    events = [TimedEvent(s.t_ms, s.event) for s in store.events(record.run_id)]
    if events:
        return events, False
    return events_from_record(record), True


def load_stored_run(path: Path, run_id: str, reuse: LightParts | None = None) -> LiveRun:
    """Run ``run_id`` folded into a ``LiveRun`` for the views. A run another process is still
    recording: what it has so far. ``reuse``: what the light read of the run shown produced
    (``lazy_steps.light_parts``), taken instead of read again."""
    with Store.open(path) as store:
        try:
            return LiveRun.from_record(store.load(run_id, reuse))
        except RunStillRecording:
            partial = LiveRun()
            for stored in store.events(run_id):
                partial.apply(stored.event)
            return partial


LIGHT_FROM = 5_000  # steps: a run this long opens from the light read first


def release_run(run: LiveRun) -> None:
    """Empties ``run``, which nothing else holds, a slice at a time: for a worker thread. A
    100,000-step run dropped at once is one C call freeing millions of objects with the GIL
    held (~0.8 s: a frozen window); slice by slice, other threads run in between. A light
    run's steps (``core/lazy_steps``: read-only sequences) drop what they built and read."""
    steps = light_steps(run)
    if steps is not None:
        steps.release()
    candidates: list[Any] = [run.finals, run.steps]
    if run.record is not None:
        candidates += [run.record.steps, run.record.transcript]
    for items in candidates:
        if type(items) is list:
            release_items(items)


def release_items(items: list[Any] | dict[Any, Any]) -> None:
    """Empties ``items``, which nothing else holds, ``RELEASE_BUILT`` entries a slice with a
    pause between two (the UI thread takes the GIL then): for a worker thread. 5,000 steps
    freed at once held the GIL ~40 ms, 100,000 run summaries ~40 ms."""
    while items:
        if isinstance(items, list):
            del items[-RELEASE_BUILT:]
        else:
            for _ in range(min(RELEASE_BUILT, len(items))):
                items.popitem()
        time.sleep(RELEASE_PAUSE_S)


def load_light_run(path: Path, run_id: str, min_steps: int | None = None) -> LiveRun | None:
    """Finished run ``run_id`` of ``min_steps`` (``LIGHT_FROM``) steps or more, from the
    store's light read: its steps built when read, stand-in requests (``LiveRun.light``); the
    full fold (``load_stored_run``) follows. None: a shorter run, or one still recording."""
    with Store.open(path) as store:
        record = store.load_light(run_id, LIGHT_FROM if min_steps is None else min_steps)
    if record is None:
        return None
    run = light_run(record)
    rows = light_rows(run)
    assert rows is not None
    for position in rows.noted:
        if rows.note_count(position) < 0:  # built here: the timeline counts their notes
            run.steps[position]
    return run


def load_step(path: Path, run_id: str, index: int) -> Step:
    """Step ``index`` of stored run ``run_id`` alone, read whole (``Store.load_step``)."""
    with Store.open(path) as store:
        return store.load_step(run_id, index)


@dataclass(frozen=True)
class Recording:
    """What a playback plays: a run's events in order and, once it ended, its record."""

    run_id: str
    events: list[TimedEvent]
    record: RunRecord | None
    synthesized: bool  # stored without its event log: rebuilt from the record (one delta a step)


def load_recording(path: Path, run_id: str) -> Recording:
    """Run ``run_id``'s events for playback. A run stored without events (an import) plays the
    events rebuilt from its record; a run still recording plays what it has so far."""
    with Store.open(path) as store:
        try:
            record = store.load(run_id)
        except RunStillRecording:
            events = [TimedEvent(s.t_ms, s.event) for s in store.events(run_id)]
            return Recording(run_id, events, None, synthesized=False)
        events, synthesized = events_or_rebuilt(store, record)
    return Recording(record.run_id, events, record, synthesized)
