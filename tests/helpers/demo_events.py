"""Real runs of the offline demos, as event lists, for the timeline, step detail and attempts
tests: the widgets are fed exactly what the engine emits."""

from __future__ import annotations

import asyncio
import functools
import os

from inspector.app.runtime.refcount_guard import immortalize_none
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.loop import run_turn
from inspector.core.records import RunRecord
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
immortalize_none()  # shiboken6 6.12.0 on CPython 3.11 drops a None ref per void call


@functools.cache
def demo_run(name: str) -> tuple[tuple[Event, ...], RunRecord]:
    """Every event of one turn of ``demo:NAME`` and its record (computed once per session)."""
    scenario = resolve_scenario(f"demo:{name}")
    events: list[Event] = []
    record = asyncio.run(run_turn(scenario, build_provider(scenario), events.append))
    return tuple(events), record


def stored_run(name: str) -> LiveRun:
    return LiveRun.from_record(demo_run(name)[1])
