"""RunGraveyard: a run no longer shown is freed over several event-loop turns, and only when
nothing else holds it; RunFocus hands it the run it stops showing. Turns and lists are
counted, never timed."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.runtime import run_graveyard
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.runtime.run_graveyard import RunGraveyard
from inspector.core.lazy_steps import light_run
from inspector.core.live import LiveRun
from inspector.core.records import Step
from inspector.store import Store
from tests.helpers.demo_events import demo_run


def big_run(copies: int) -> LiveRun:
    """A finished run of ``copies`` × the retry-feedback demo's steps (a scenario script in
    its source), built fresh: nothing else holds it."""
    record = demo_run("retry-feedback")[1]
    steps: list[Step] = [
        s.model_copy(update={"index": n + 1})
        for n, s in enumerate(record.steps[i % len(record.steps)] for i in range(copies))
    ]
    source = {**record.scenario_source, "script": [{"text": f"r{i}"} for i in range(copies)]}
    return LiveRun.from_record(
        record.model_copy(update={"steps": steps, "scenario_source": source})
    )


def test_a_run_held_by_nobody_else_is_freed_over_several_turns(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_graveyard, "SLICE_S", 0.0)  # one chunk per turn
    graveyard = RunGraveyard()
    run = big_run(1_000)
    record = run.record
    assert record is not None
    gone, step_gone = weakref.ref(run), weakref.ref(run.steps[0])
    del record
    graveyard.bury(run)
    del run
    assert gone() is not None  # kept: not freed inside the caller's turn
    qtbot.waitUntil(lambda: graveyard.pending == 0)
    gc.collect()
    assert gone() is None and step_gone() is None
    # drained a chunk a turn: the script, the record's steps, the finals, the steps
    assert graveyard.turns >= 4 * 1_000 // run_graveyard.CHUNK


def test_a_run_still_held_elsewhere_is_let_go_untouched(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_graveyard, "PATIENCE", 3)
    graveyard = RunGraveyard()
    run = big_run(300)
    graveyard.bury(run)  # the test (a view, the run in flight) still holds it
    qtbot.waitUntil(lambda: graveyard.pending == 0)
    assert len(run.steps) == 300 and len(run.finals) == 300
    assert run.record is not None and len(run.record.steps) == 300
    assert len(run.record.scenario_source["script"]) == 300


def test_run_focus_buries_the_run_it_stops_showing(qtbot: QtBot) -> None:
    focus = RunFocus()
    first, second = big_run(50), big_run(50)
    focus.shown = first
    assert focus.graveyard.pending == 0
    focus.shown = first  # the same run again: nothing to free
    assert focus.graveyard.pending == 0
    focus.shown = second
    assert focus.graveyard.pending == 1
    gone = weakref.ref(first)
    del first
    qtbot.waitUntil(lambda: focus.graveyard.pending == 0)
    assert gone() is None and focus.shown is second


def test_a_light_run_is_freed_off_the_ui_thread(qtbot: QtBot, tmp_path: Path) -> None:
    record = demo_run("retry-feedback")[1]
    with Store.open(tmp_path / "light.sqlite3") as store:
        store.save(record)
        light = store.load_light(record.run_id)
    assert light is not None
    run = light_run(light)
    freed_on: list[int] = []  # the thread that freed each step built (a view read them all)
    for step in run.steps:
        weakref.finalize(step, lambda: freed_on.append(threading.get_ident()))
    graveyard = RunGraveyard()
    gone = weakref.ref(run)
    graveyard.bury(run)
    del run, light, step
    qtbot.waitUntil(lambda: graveyard.pending == 0)
    qtbot.waitUntil(lambda: gone() is None and len(freed_on) == len(record.steps))
    assert threading.get_ident() not in freed_on
