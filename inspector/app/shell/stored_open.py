"""Opening a stored run in the window, read and folded on worker threads.

A run of ``LIGHT_FROM`` steps or more opens in two stages (docs/window-speed.md, "Opening a
long stored run"): the store's light read is shown first (``LiveRun.light``: each step built
when a view reads it, stand-in requests), then the full record is read and folded on a worker
thread and put in place (``LiveRun.fill``): the timeline keeps its rows and repaints, the
views that need whole steps (Model saw, Raw, the Attempts tab) render then. A shorter run,
or one still recording, is read whole once, as before.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QLabel, QStatusBar

from inspector.app.detail.attempt_index import AttemptIndex
from inspector.app.detail.attempts_view import AttemptsView
from inspector.app.detail.model_saw import run_failures
from inspector.app.detail.step_detail import StepDetail
from inspector.app.runtime.gui_collector import collection_held, settle_loaded
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.shell.run_status import RunStatus
from inspector.app.timeline.timeline_rows import LightLayout, lay_out_light
from inspector.app.timeline.timeline_view import TimelineView
from inspector.app.validators.validators_panel import ValidatorsPanel
from inspector.app.widgets.message_bar import MessageBar
from inspector.core.errors import InspectorError
from inspector.core.lazy_steps import LightParts, light_parts, light_rows, light_steps, put_whole
from inspector.core.live import LiveRun
from inspector.reports.request_marks import FailureIndex
from inspector.store import Store
from inspector.workflows.runs import load_light_run, load_step, release_run


class Read(Protocol):
    """The whole read and fold of a stored run (``workflows.runs.load_stored_run``); ``reuse``:
    what the light read of the run shown produced, not read again."""

    def __call__(self, path: Path, run_id: str, reuse: LightParts | None = None, /) -> LiveRun: ...


class StoredRunWindow(Protocol):
    """What opening a stored run uses of the window (``shell.main_window.MainWindow``)."""

    store: Store
    focus: RunFocus
    timeline: TimelineView
    attempts: AttemptsView
    detail: StepDetail
    status: RunStatus
    validators: ValidatorsPanel
    run_heading: QLabel
    message_bar: MessageBar

    def statusBar(self) -> QStatusBar: ...

    def show_loaded(self, run: LiveRun) -> None: ...


async def open_stored(window: StoredRunWindow, run_id: str, read: Read) -> None:
    """Reads run ``run_id`` (``read``: the whole fold) and shows it, unless the user picked
    something else meanwhile; a long run is shown from its light read first."""
    loop, path, focus = asyncio.get_running_loop(), window.store.path, window.focus
    layout: LightLayout | None = None
    try:
        with collection_held():  # until settle_loaded() below freezes what it built
            run = await loop.run_in_executor(None, load_light_run, path, run_id)
            if run is None:
                run = await loop.run_in_executor(None, read, path, run_id)
            elif (light := light_rows(run)) is not None:  # its timeline rows laid out here too
                cleared = window.timeline.model.show_cleared
                layout = await loop.run_in_executor(None, lay_out_light, light, run.steps, cleared)
    except InspectorError as exc:
        if focus.loading == run_id:
            focus.set_loading(None)
            unreadable(window, run_id, exc)
        return
    if focus.loading != run_id:  # the user picked something else meanwhile
        await loop.run_in_executor(None, release_run, run)  # freed off the UI thread
        return
    focus.set_loading(None)
    window.statusBar().clearMessage()
    if layout is not None:  # adopted by the timeline's show_run unless its filter changed
        window.timeline.model.prepare(layout)
    window.show_loaded(run)
    settle_loaded()  # its objects out of the collector's scans: no pauses with it shown
    if run.light:
        await fill(window, run, read)


async def fill(window: StoredRunWindow, run: LiveRun, read: Read) -> None:
    """Reads ``run`` (shown from its light read) whole and puts the full steps in place, if it
    is still the run shown when they arrive."""
    loop = asyncio.get_running_loop()
    reuse = light_parts(run)  # the light read's bodies and verdicts: not read again
    try:
        with collection_held():
            full = await loop.run_in_executor(None, read, window.store.path, run.run_id, reuse)
            failures, attempts = await loop.run_in_executor(None, indexes_of, full)
    except InspectorError as exc:
        if window.focus.shown is run and window.focus.loading is None:
            window.show_loaded(LiveRun())  # nothing half-read stays on screen
            unreadable(window, run.run_id, exc)
        return
    if window.focus.shown is not run or not run.light:  # another run is shown now
        await loop.run_in_executor(None, release_run, full)  # freed off the UI thread
        if window.focus.shown is not run:  # the graveyard frees it off the UI thread too,
            window.focus.graveyard.bury(run)  # once this coroutine let go of it
        return
    light = light_steps(run)  # freed below off the UI thread, as its only holder
    run.fill(full)
    window.detail.model_saw_pane.adopt_failures(run, failures)
    window.timeline.steps_filled()
    # the step selected while the run was light: the Attempts tab shows its attempt, at its
    # render (a turn of its own, as the Step detail's below)
    window.attempts.show_run(run, attempts, window.timeline.selected_step() or None)
    window.detail.show_step(run, window.detail.current_step, soon=True)  # a turn of its own
    if full.record is not None:
        window.status.show_record(full.record)
    window.validators.show_run(run)
    settle_loaded()
    if light is not None:  # the light steps (bodies, steps built) freed off the UI thread:
        await loop.run_in_executor(None, light.release)  # 10,000 built held it ~25 ms


def indexes_of(full: LiveRun) -> tuple[FailureIndex, AttemptIndex]:
    """What the Step detail's *Model saw* (what earlier attempts left in a request) and the
    Attempts tab (where each attempt starts, its tool steps) index a run by, built from its
    full read on a worker thread: for 10,000 attempts ~12 and ~6 ms of CPU, that the first
    renders after the fill spent on the UI thread."""
    attempts = AttemptIndex()
    while attempts.update(full.steps):  # CLASSIFY_BUDGET steps a call
        pass
    return run_failures(full), attempts


_FETCHES: set[asyncio.Task[None]] = set()  # steps being read alone (tasks are weak refs)


def fetch_step_soon(window: StoredRunWindow, run: LiveRun, index: int) -> None:
    """Reads step ``index`` of the light ``run`` alone (its request: *Model saw*, *Raw*) on a
    worker thread while the whole run is read; shown if it is still the step shown."""
    task = asyncio.get_event_loop().create_task(_fetch_step(window, run, index))
    _FETCHES.add(task)
    task.add_done_callback(_FETCHES.discard)


async def _fetch_step(window: StoredRunWindow, run: LiveRun, index: int) -> None:
    loop = asyncio.get_running_loop()
    try:
        step = await loop.run_in_executor(None, load_step, window.store.path, run.run_id, index)
    except InspectorError:
        return  # the whole read, under way, says what is wrong
    if window.focus.shown is run and put_whole(run, step) and window.detail.current_step == index:
        window.detail.show_step(run, index)


def unreadable(window: StoredRunWindow, run_id: str, exc: InspectorError) -> None:
    window.statusBar().clearMessage()
    window.run_heading.setText(f"Run {run_id} could not be loaded.")
    window.message_bar.show_message("error", str(exc))
