"""Raw request bodies load sharing one wire-message list per run, and read as before.

Issue 18 item 2: each step's raw body re-sends the whole history; rebuilt as a list per step, a
100,000-step run recorded from a provider could not be loaded. Loaded, each body's ``messages``
is a ``SharedPrefix`` view; everything that reads a raw body reads it as the list it was.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from inspector.core import credentials
from inspector.core.credentials import REDACTED
from inspector.core.events import RunFinished, RunStarted, StepFinished, StepStarted
from inspector.core.raw_body import plain, raw_messages
from inspector.core.records import RawExchange, RunRecord, Step
from inspector.core.shared_list import SharedPrefix
from inspector.reports.html_report import render_html
from inspector.reports.jsonl import jsonl_lines, read_jsonl
from inspector.reports.redact import redact
from inspector.store import Store
from tests.store.synthetic import long_turn, wire

STEPS = 40


def wrapped(record: RunRecord) -> RunRecord:
    """The record with its raw bodies wrapped as a recorded exchange (``body.messages``), a
    path-less body at step 10 and no raw body at step 20 (each starts a list of its own)."""
    out: list[Step] = []
    for step in record.steps:
        assert step.raw is not None
        raw: RawExchange | None = RawExchange(
            request={"url": "https://x/v1", "body": step.raw.request}, response=step.raw.response
        )
        if step.index == 10:
            raw = RawExchange(request="not json", response=None)
        if step.index == 20:
            raw = None
        out.append(step.model_copy(update={"raw": raw}))
    return record.model_copy(update={"steps": out})


def raw_lists(record: RunRecord) -> list[SharedPrefix[object]]:
    views = []
    for step in record.steps:
        messages = raw_messages(step.raw.request) if step.raw is not None else None
        if messages is not None:
            assert isinstance(messages, SharedPrefix)
            views.append(messages)
    return views


def test_raw_bodies_load_exactly_as_one_shared_list(store: Store) -> None:
    record = long_turn(STEPS)
    store.save(record)
    loaded = store.load(record.run_id)
    assert loaded == record
    assert loaded.model_dump_json() == record.model_dump_json()
    assert loaded.model_dump() == record.model_dump()  # python mode: plain lists
    assert json.dumps(loaded.model_dump(mode="json")) == json.dumps(record.model_dump(mode="json"))
    views = raw_lists(loaded)
    assert len(views) == STEPS and len({id(v.items) for v in views}) == 1
    assert all(a.shares_items(b) for a, b in itertools.pairwise(views))
    assert [len(v) for v in views] == [len(s.raw.request["messages"]) for s in record.steps]  # type: ignore[union-attr]


def test_a_break_in_the_raw_chain_starts_a_new_list(store: Store) -> None:
    record = wrapped(long_turn(30))
    store.save(record)
    loaded = store.load(record.run_id)
    assert loaded.model_dump_json() == record.model_dump_json()
    views = raw_lists(loaded)
    assert len(views) == 28 and len({id(v.items) for v in views}) == 3  # before 10, 10-20, after


def test_a_loaded_record_written_again_loads_the_same(store: Store, tmp_path: Path) -> None:
    record = wrapped(long_turn(STEPS))
    store.save(record)
    loaded = store.load(record.run_id)
    with Store.open(tmp_path / "again.sqlite3") as again:
        again.save(loaded)  # the writer reads the views (e.g. a replay's or an import's record)
        assert again.load(record.run_id).model_dump_json() == record.model_dump_json()
    copy = loaded.model_copy(update={"run_id": "copy00000001"})
    store.save(copy)
    assert store.load("copy00000001").model_dump_json() == copy.model_dump_json()


def test_exports_of_a_loaded_run_are_those_of_the_record(store: Store) -> None:
    for record in (long_turn(STEPS), wrapped(long_turn(STEPS, run_id="wrap0000turn"))):
        store.save(record)
        loaded = store.load(record.run_id)
        assert list(jsonl_lines(loaded, [])) == list(jsonl_lines(record, []))
        assert render_html(loaded) == render_html(record)
        _, events = read_jsonl(list(jsonl_lines(loaded, [])))
        assert events == read_jsonl(list(jsonl_lines(record, [])))[1]


def test_plain_gives_the_body_with_a_list() -> None:
    history = wire(long_turn(3).transcript)
    view = SharedPrefix(history, 2)
    body = {"model": "m", "messages": view, "stream": True}
    assert plain(body) == {"model": "m", "messages": history[:2], "stream": True}
    assert type(plain(body)["messages"]) is list and body["messages"] is view
    outer = {"url": "u", "body": body}
    assert json.dumps(plain(outer)) == json.dumps({"url": "u", "body": plain(body)})
    assert plain(outer)["body"] is not body and plain({"messages": [1]}) == {"messages": [1]}
    assert plain("not json") == "not json"


def test_redaction_walks_a_shared_list() -> None:
    secret = [
        {"role": "user", "content": "Bearer abcdefghijkl.mnop"},
        {"role": "user", "content": "hi"},
    ]
    body = {"messages": SharedPrefix(secret, 2)}
    assert credentials.redact(body) == {
        "messages": [{"role": "user", "content": REDACTED}, secret[1]]
    }
    assert redact({"messages": SharedPrefix([{"content": "key sk-" + "a" * 40}], 1)}) == {
        "messages": [{"content": f"key {REDACTED}"}]
    }


def test_a_loaded_record_streamed_again_through_the_recorder(store: Store, tmp_path: Path) -> None:
    # What a replay records: the loaded steps' raw exchanges (views) in its events and record.
    record = wrapped(long_turn(STEPS))
    store.save(record)
    loaded = store.load(record.run_id)
    header = loaded.model_dump(include={"run_id", "scenario", "started_at", "policy", "provider"})
    with Store.open(tmp_path / "replayed.sqlite3") as again:
        recorder = again.recorder()
        recorder(RunStarted(**header, model=loaded.model))
        for step in loaded.steps:
            start = StepStarted(
                run_id=loaded.run_id, index=step.index, attempt=1, request=step.request
            )
            recorder(start)
            recorder(StepFinished(run_id=loaded.run_id, step=step))
        recorder(RunFinished(run_id=loaded.run_id, record=loaded))
        assert recorder.error is None
        assert again.load(record.run_id).model_dump_json() == record.model_dump_json()
        assert len({id(v.items) for v in raw_lists(again.load(record.run_id))}) == 3
