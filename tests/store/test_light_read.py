"""The light read (store/light_read.py, ``Store.load_light``): a finished run's record with its
steps built when read — each the stored step but for its request (a shared stand-in) and raw
exchange — and the columns the timeline lays its rows out from, equal to the full steps'."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from inspector.core.errors import InspectorError
from inspector.core.lazy_steps import LightParts, LightRecordNotDumped, LightRunRecord, StepRows
from inspector.core.live import LiveStep
from inspector.core.records import RunRecord, Step
from inspector.reports.record_json import write_record_json
from inspector.reports.step_notes import note_count
from inspector.store import RunNotFound, Store, reader
from inspector.store.light_read import DAMAGED_STEP, STAND_IN_REQUEST
from inspector.store.writer import RUNNING
from tests.store.conftest import OFFLINE_DEMOS, record_demo
from tests.store.synthetic import every_shape
from tests.store.test_bulk_read import varied_turn

WITHOUT = {"request", "raw"}  # what a light step does not have (yet)


def has_notes(step: Step) -> bool:
    failed = any(not v.ok for v in step.verdicts)
    error = step.status == "error" and bool(step.error)
    return bool(step.feedback) or step.forced is not None or failed or error


def check_light(store: Store, record: RunRecord) -> StepRows:
    full = store.load(record.run_id)
    light = store.load_light(record.run_id)
    assert light is not None
    rows = light.steps
    assert isinstance(rows, StepRows)
    assert rows.built() == 0  # nothing built before it is read
    assert len(rows) == len(full.steps)
    for mine, theirs in zip(rows, full.steps, strict=True):
        assert mine.model_dump(exclude=WITHOUT) == theirs.model_dump(exclude=WITHOUT)
        assert mine.request is STAND_IN_REQUEST and mine.raw is None
    assert list(rows.attempts) == [s.attempt for s in full.steps]
    assert list(rows.sizes) == [len(s.request.messages) for s in full.steps]
    assert list(rows.cleared) == [int(s.cleared) for s in full.steps]
    latencies = [s.latency_ms for s in full.steps if s.latency_ms is not None]
    assert rows.slowest == max(latencies, default=0.0)
    noted = {n for n, s in enumerate(full.steps) if has_notes(s)}
    assert noted <= set(rows.noted)  # the steps the timeline builds to count their notes
    assert not {n for n in rows.noted if not full.steps[n].verdicts} - noted
    for n, step in enumerate(full.steps):  # the notes the timeline counts without a build
        expected = -1 if step.forced is not None else note_count(LiveStep.from_step(step))
        assert rows.note_count(n) == expected, n
    header = set(LightRunRecord.LACKS)
    assert light.model_dump(exclude=header) == full.model_dump(exclude=header)
    assert light.transcript == [] and light.scenario_source == {}
    return rows


def test_every_shape_of_step_reads_light_as_stored(store: Store) -> None:
    rows = check_light(store, store_saved(store, every_shape()))
    assert rows.noted == [0, 1, 2, 3]  # feedback, forced, forced, an error; not the refusal


def test_a_varied_run_with_large_texts_reads_light_as_stored(store: Store) -> None:
    check_light(store, store_saved(store, varied_turn(23)))


@pytest.mark.parametrize("demo", OFFLINE_DEMOS)
def test_recorded_demos_read_light_as_stored(store: Store, demo: str) -> None:
    check_light(store, record_demo(store, demo)[0])


def test_a_step_is_built_once_when_first_read(store: Store) -> None:
    rows = store.load_light(store_saved(store, varied_turn(9)).run_id)
    assert rows is not None and isinstance(rows.steps, StepRows)
    steps = rows.steps
    assert steps[-1] is steps[8] and steps.built() == 1
    assert [s.index for s in steps[2:4]] == [3, 4] and steps.built() == 3


def test_short_runs_and_runs_still_recording_are_not_read_light(
    store: Store, tmp_path: Path
) -> None:
    record = store_saved(store, varied_turn(9))
    assert store.load_light(record.run_id, min_steps=10) is None
    assert store.load_light(record.run_id, min_steps=9) is not None
    conn = sqlite3.connect(tmp_path / "runs.sqlite3")
    with conn:
        conn.execute("UPDATE runs SET status = ?", (RUNNING,))
    conn.close()
    assert store.load_light(record.run_id[:6]) is None  # a prefix names it too


def test_a_damaged_step_body_builds_an_error_step(store: Store, tmp_path: Path) -> None:
    """The full read then fails with the store's one-line error; the light one paints."""
    record = store_saved(store, varied_turn(9))
    conn = sqlite3.connect(tmp_path / "runs.sqlite3")
    with conn:
        conn.execute('UPDATE steps SET body = \'{"index": "x"}\' WHERE idx = 4')
    conn.close()
    light = store.load_light(record.run_id)
    assert light is not None
    broken = light.steps[3]
    assert (broken.index, broken.status, broken.error) == (4, "success", DAMAGED_STEP)
    assert light.steps[4].model_dump(exclude=WITHOUT) == record.steps[4].model_dump(exclude=WITHOUT)


def store_saved(store: Store, record: RunRecord) -> RunRecord:
    store.save(record)
    return record


@pytest.mark.parametrize("name", ["every shape", "varied", "demos"])
def test_each_step_read_alone_is_the_step_load_reads(store: Store, name: str) -> None:
    if name == "demos":
        records = [record_demo(store, demo)[0] for demo in OFFLINE_DEMOS]
    else:
        records = [store_saved(store, every_shape() if name == "every shape" else varied_turn(23))]
    for record in records:
        full = store.load(record.run_id)
        for step in full.steps:
            alone = store.load_step(record.run_id[:8], step.index)
            assert alone == step
            assert alone.model_dump_json() == step.model_dump_json()


@pytest.mark.parametrize("name", ["every shape", "varied", "demos"])
def test_the_whole_read_reusing_the_light_one_is_the_whole_read(
    store: Store, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Store.load(run_id, reuse)`` takes the light read's step bodies (texts, and dicts
    where large texts were resolved) and verdicts instead of reading them again: the record
    is the one ``load`` reads, each step's verdicts a list of its own."""
    if name == "demos":
        records = [record_demo(store, demo)[0] for demo in OFFLINE_DEMOS]
    else:
        records = [store_saved(store, every_shape() if name == "every shape" else varied_turn(23))]
    read_again: list[str] = []
    for record in records:
        whole = store.load(record.run_id)
        light = store.load_light(record.run_id)
        assert light is not None and isinstance(light.steps, StepRows)
        reuse = light.steps.parts()
        assert reuse is not None and len(reuse.bodies) == len(whole.steps)
        monkeypatch.setattr(reader, "read_verdicts", lambda *a: read_again.append("read") or {})
        reused = store.load(record.run_id, reuse)
        monkeypatch.undo()
        assert read_again == []
        assert reused == whole
        assert reused.model_dump_json() == whole.model_dump_json()
        held = [light.steps[n].verdicts for n in range(len(light.steps))]
        for step, light_verdicts in zip(reused.steps, held, strict=True):
            assert step.verdicts is not light_verdicts
        assert light.steps.held() == len(whole.steps)  # the light run's bodies left as they were


def test_released_light_steps_give_nothing_to_reuse(store: Store) -> None:
    light = store.load_light(store_saved(store, varied_turn(9)).run_id)
    assert light is not None and isinstance(light.steps, StepRows)
    light.steps.release()
    assert light.steps.parts() is None


def test_parts_that_are_not_the_runs_are_not_reused(store: Store) -> None:
    """Bodies of another step count: the bodies and the verdicts are read as without them."""
    record = store_saved(store, every_shape())
    assert any(step.verdicts for step in record.steps)
    light = store.load_light(record.run_id)
    assert light is not None and isinstance(light.steps, StepRows)
    parts = light.steps.parts()
    assert parts is not None
    assert store.load(record.run_id, LightParts(parts.bodies[:-1], {})) == store.load(record.run_id)


def test_a_step_that_is_not_there_is_one_line(store: Store) -> None:
    record = store_saved(store, every_shape())
    with pytest.raises(RunNotFound, match="no step 6 in run"):
        store.load_step(record.run_id, 6)


def test_a_light_record_is_not_dumped_but_says_why_in_one_line(store: Store) -> None:
    record = store_saved(store, varied_turn(9))
    light = store.load_light(record.run_id)
    assert light is not None
    expected = rf"^run {record.run_id} was read light \(no requests, raw exchanges, transcript"
    dumps = {
        "model_dump": light.model_dump,
        "model_dump json": lambda: light.model_dump(mode="json"),
        "model_dump_json": light.model_dump_json,
        "record JSON writer": lambda: write_record_json(light, io.StringIO()),
        "without its steps": lambda: light.model_dump_json(exclude={"steps"}),
        "a copy": lambda: light.model_copy().model_dump_json(),
    }
    for name, dump in dumps.items():
        with pytest.raises(LightRecordNotDumped, match=expected) as raised:
            dump()
        assert "\n" not in str(raised.value), name
    assert isinstance(raised.value, InspectorError)  # the CLI's one-line error
    # What it holds as read dumps, as the full record's (every field but what it lacks).
    lacks = set(LightRunRecord.LACKS)
    full = store.load(record.run_id)
    assert light.model_dump_json(exclude=lacks) == full.model_dump_json(exclude=lacks)
    assert light.model_dump(exclude=dict.fromkeys(lacks, True)) == full.model_dump(exclude=lacks)
    kept = {"run_id", "status", "usage"}
    assert light.model_dump(include=kept) == full.model_dump(include=kept)
    out = io.StringIO()
    write_record_json(full, out)  # the full record of the same run: what to dump instead
    assert json.loads(out.getvalue()) == full.model_dump(mode="json")
