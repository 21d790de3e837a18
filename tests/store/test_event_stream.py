"""``Store.event_stream`` reads a run's events as they are iterated, a chunk of rows at a time:
the events ``events_as_stored`` gives, in order, with their number known first and the record
of the run's end; a damaged body still fails the read, as the store reports it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.core import events as core_events
from inspector.core.events import RunFinished, TextDelta
from inspector.core.loop import Turn
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider
from inspector.reports.jsonl import VERBATIM_KINDS
from inspector.store import Store, StoreUnusable, event_rows
from inspector.store.models import AsStored, PlainEvent
from tests.reports.test_jsonl_same_bytes import _scenario


async def _recorded(db: Path, steps: int) -> str:
    source = scenario_from_dict(_scenario(steps), source="s.toml", base_dir=db.parent)
    with Store.open(db) as store:
        turn = Turn(source, ScriptedProvider(source.script), core_events.fan_out(store.recorder()))
        return (await turn.run()).run_id


def _same(streamed: list[Any], listed: list[Any]) -> None:
    assert len(streamed) == len(listed)
    for a, b in zip(streamed, listed, strict=True):
        assert (a.t_ms, a.event) == (b.t_ms, b.event)
        assert isinstance(a, AsStored) == isinstance(b, AsStored)
        if isinstance(a, AsStored):
            assert a.stored_json == b.stored_json
        else:
            assert isinstance(a, PlainEvent)


@pytest.mark.parametrize("chunk", [1, 3, event_rows.CHUNK])
async def test_the_stream_gives_the_events_the_list_gives(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_rows, "CHUNK", chunk)
    db = tmp_path / "runs.sqlite3"
    run_id = await _recorded(db, 6)
    with Store.open(db) as store:
        stream = store.event_stream(run_id, VERBATIM_KINDS)
        listed = store.events_as_stored(run_id, VERBATIM_KINDS)
        assert len(stream) == len(listed)
        streamed = list(stream)
        last = listed[-1].event
    _same(streamed, listed)
    assert isinstance(last, RunFinished) and stream.record == last.record
    # the record is read once: the run_finished event carries the same object
    assert streamed[-1].event.record is stream.record
    # text deltas stored as references to their step's text, across chunks
    assert any(type(e.event) is TextDelta for e in streamed)


async def test_a_run_whose_events_do_not_end_it_streams_without_a_record(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = await _recorded(db, 2)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE run_id = ? AND kind = 'run_finished'", (run_id,))
    with Store.open(db) as store:
        stream = store.event_stream(run_id, VERBATIM_KINDS)
        streamed = list(stream)
        listed = store.events_as_stored(run_id, VERBATIM_KINDS)
    assert stream.record is None and len(stream) == len(listed) > 3
    _same(streamed, listed)


async def test_rows_that_are_no_event_are_not_counted(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = await _recorded(db, 2)
    with sqlite3.connect(db) as conn:  # a kind no reader knows, without a body
        conn.execute(
            "INSERT INTO events (run_id, seq, t_ms, kind, idx, body)"
            " SELECT run_id, seq + 1000, t_ms, 'unknown_kind', idx, NULL FROM events"
            " WHERE run_id = ? AND kind = 'step_started'",
            (run_id,),
        )
    with Store.open(db) as store:
        stream = store.event_stream(run_id, VERBATIM_KINDS)
        listed = store.events_as_stored(run_id, VERBATIM_KINDS)
        assert len(stream) == len(listed)
        _same(list(stream), listed)


async def test_a_damaged_body_fails_the_stream_as_the_store_reports_it(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = await _recorded(db, 2)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET body = ? WHERE kind = 'tool_call_delta'",
            ('{"kind":"tool_call_delta","index":"two","call_index":0}',),
        )
    with Store.open(db) as store:
        stream = store.event_stream(run_id, VERBATIM_KINDS)
        with pytest.raises(StoreUnusable, match="damaged store"):
            list(stream)


def test_large_texts_and_every_code_point_stream_as_they_list(tmp_path: Path) -> None:
    from inspector.core.events import RunStarted
    from tests.reports.exports_with_secrets import leaky_turn
    from tests.reports.test_jsonl_as_stored import RUN, TEXTS, _kind_events

    record = leaky_turn().model_copy(update={"run_id": RUN, "steps": []})
    with Store.open(tmp_path / "runs.sqlite3") as store:
        sink = store.recorder()
        sink(RunStarted.from_record(record))
        for n, text in enumerate(TEXTS[:3]):
            for event in _kind_events(text, n):
                sink(event)
        sink(RunFinished(run_id=RUN, record=record))
        stream = store.event_stream(RUN, VERBATIM_KINDS)
        listed = store.events_as_stored(RUN, VERBATIM_KINDS)
        assert len(stream) == len(listed)
        _same(list(stream), listed)
    assert stream.record is not None and stream.record.run_id == RUN
