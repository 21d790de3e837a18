"""The use cases the CLI and the window share, called directly (no command line, no Qt)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector.core.events import Event
from inspector.core.loop import Turn
from inspector.store import RunStillRecording, Store
from inspector.workflows.compare import different_scenarios, load_comparison
from inspector.workflows.revalidate import recheck, revalidate_scenario
from inspector.workflows.runs import events_or_rebuilt, load_recording, load_stored_run
from inspector.workflows.turns import plan_turn, replay
from tests.helpers.runs import demo_record, demo_run


def _record_into(db: Path, demo: str, *overrides: str) -> str:
    record = asyncio.run(demo_record(demo, *overrides))
    with Store.open(db) as store:
        store.save(record)
    return record.run_id


def test_plan_turn_loads_the_scenario_before_any_store_is_opened(tmp_path: Path) -> None:
    plan = plan_turn("demo:retry-feedback", ["policy.max_attempts=2"])
    assert plan.scenario.policy.max_attempts == 2
    events: list[Event] = []
    assert isinstance(plan.turn(events.append), Turn)
    assert not list(tmp_path.iterdir())  # nothing written: the CLI opens the store after this


def test_a_run_stored_without_events_plays_and_exports_rebuilt_events(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = _record_into(db, "retry-feedback")
    with Store.open(db) as store:
        events, synthesized = events_or_rebuilt(store, store.load(run_id))
    assert synthesized and events[0].event.kind == "run_started"
    recording = load_recording(db, run_id)
    assert recording.synthesized and len(recording.events) == len(events)
    assert load_stored_run(db, run_id).record is not None


def test_offline_replay_of_a_record_builds_without_a_provider(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = _record_into(db, "retry-feedback")
    with Store.open(db) as store:
        original = store.load(run_id)
    events: list[Event] = []
    record = asyncio.run(replay(original, [], events.append, offline=True).run())
    assert record.replay_of == run_id


def test_runs_of_two_scenarios_are_named_with_their_scenarios(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    first = _record_into(db, "retry-feedback")
    second = _record_into(db, "step-cap")
    records, comparison = load_comparison(db, [first, second])
    listed = different_scenarios(records, id_chars=8)
    assert listed is not None and f"{first[:8]} is 'retry-feedback'" in listed
    assert different_scenarios(records[:1]) is None
    assert len(comparison.runs) == 2


def test_revalidation_of_a_scenario_gives_one_matrix_row_per_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = _record_into(db, "retry-feedback")
    _record_into(db, "retry-feedback")
    with Store.open(db) as store:
        table = revalidate_scenario(store, "retry-feedback", None)
    assert len(table.rows) == 2 and all(r.error is None for r in table.rows)
    with Store.open(db) as store:
        again = recheck(store.load(run_id), None)
    assert again.run_id == run_id and not again.flips


def test_a_comparison_refuses_a_run_still_recording_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    done = _record_into(db, "retry-feedback")
    _, events = asyncio.run(demo_run("retry-feedback"))
    with Store.open(db) as store:
        recorder = store.recorder()
        for event in events[:-1]:  # everything but run_finished: still recording
            recorder(event)
    with pytest.raises(RunStillRecording, match="still recording; compare it once"):
        load_comparison(db, [done, events[0].run_id])
