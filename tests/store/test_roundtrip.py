"""What goes into the store comes back exactly: records, events, summaries."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.core.events import EVENT_ADAPTER, Event
from inspector.core.records import RunRecord
from inspector.core.scenario import scenario_from_dict
from inspector.core.shared_list import SharedPrefix
from inspector.store import RunNotFound, Store
from tests.store.conftest import OFFLINE_DEMOS, record_demo, record_turn
from tests.store.synthetic import every_shape, long_turn


def dumped(events: list[Event]) -> list[object]:
    return [EVENT_ADAPTER.dump_python(e, mode="json") for e in events]


@pytest.mark.parametrize("demo", OFFLINE_DEMOS)
def test_every_demo_loads_as_recorded(store: Store, demo: str) -> None:
    record, seen = record_demo(store, demo)
    loaded = store.load(record.run_id)
    assert loaded == record
    assert loaded.model_dump(mode="json") == record.model_dump(mode="json")
    stored = store.events(record.run_id)
    assert dumped([s.event for s in stored]) == dumped(seen)
    offsets = [s.t_ms for s in stored]
    assert offsets[0] >= 0 and offsets == sorted(offsets)


def test_policy_variants_round_trip(store: Store) -> None:
    # Histories that are not a prefix of the previous request (latest feedback, dropped
    # attempts) and feedback as synthetic tool messages.
    for overrides in (
        ("policy.feedback_history=latest",),
        ("policy.feedback_history=none", "policy.keep_failed_attempts=false"),
        ("policy.feedback_role=tool",),
    ):
        record, _ = record_demo(store, "retry-feedback", *overrides)
        assert store.load(record.run_id) == record


@pytest.mark.parametrize("make", [every_shape, lambda: long_turn(30)], ids=["shapes", "long"])
def test_saved_records_load_exactly(store: Store, make: object) -> None:
    assert callable(make)
    record: RunRecord = make()
    store.save(record)
    assert store.load(record.run_id) == record
    assert store.events(record.run_id) == []  # a saved record has no event stream


def test_each_message_is_stored_once(store: Store, tmp_path: Path) -> None:
    steps = 60
    record = long_turn(steps)
    store.save(record)
    conn = sqlite3.connect(tmp_path / "runs.sqlite3")
    added = [json.loads(a) for (a,) in conn.execute("SELECT msg_added FROM steps")]
    raw_added = [json.loads(a) for (a,) in conn.execute("SELECT raw_added FROM steps")]
    distinct = {m.model_dump_json() for s in record.steps for m in s.request.messages}
    # Each step references only what it added: references grow with the turn, not its square.
    assert sum(map(len, added)) == sum(map(len, raw_added)) == len(distinct) == 2 * steps - 1
    # Normalised and wire forms are the same JSON here, so one row serves both.
    everything = distinct | {m.model_dump_json() for m in record.transcript}
    messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert messages == len(everything) == len(distinct) + 3  # + the transcript's last three
    assert conn.execute("SELECT count(DISTINCT frame) FROM steps").fetchone()[0] == 1
    conn.close()


def test_loaded_messages_are_shared_between_steps(store: Store) -> None:
    store.save(long_turn(5))
    loaded = store.load("long0000turn")
    first, last = loaded.steps[0].request.messages, loaded.steps[-1].request.messages
    assert last[0] is first[0]


def test_a_growing_history_is_one_list_not_one_per_step(store: Store) -> None:
    # Issue 18 item 2: a pointer per message sent per step made a 10,000-step run take 1.7 GB.
    store.save(long_turn(50, raw=False))
    requests = [s.request.messages for s in store.load("long0000turn").steps]
    assert all(isinstance(m, SharedPrefix) for m in requests)
    assert len({id(m._items) for m in requests}) == 1
    assert [len(m) for m in requests] == sorted(len(m) for m in requests)


def test_runs_lists_newest_first_with_filters(store: Store) -> None:
    store.save(every_shape("aaaa00000001"))
    store.save(long_turn(3, run_id="bbbb00000002"))
    store.save(long_turn(2, run_id="cccc00000003"))
    ids = [s.run_id for s in store.runs()]
    # started_at orders; equal start times fall back to insertion order.
    assert ids == ["aaaa00000001", "cccc00000003", "bbbb00000002"]
    assert [s.run_id for s in store.runs(scenario="long")] == ["cccc00000003", "bbbb00000002"]
    assert [s.run_id for s in store.runs(limit=1)] == ["aaaa00000001"]
    shapes = store.runs(scenario="shapes")[0]
    assert (shapes.status, shapes.termination, shapes.steps) == ("fallback", "fallback", 5)
    assert (shapes.input_tokens, shapes.output_tokens, shapes.replay_of) == (7, 3, "abcdef123456")
    assert (shapes.provider, shapes.model, shapes.duration_ms) == ("openai", "m", 12.5)


def test_prefixes_and_unknown_ids(store: Store) -> None:
    store.save(long_turn(1, run_id="abc111111111"))
    store.save(long_turn(1, run_id="abc222222222"))
    assert store.load("abc1").run_id == "abc111111111"
    with pytest.raises(RunNotFound, match=r"run id 'abc' is ambiguous in .*runs\.sqlite3"):
        store.load("abc")
    with pytest.raises(RunNotFound, match=r"^no run 'zzz' in .*runs\.sqlite3$"):
        store.load("zzz")
    with pytest.raises(RunNotFound, match="no run ''"):
        store.events("")


def test_the_same_run_cannot_be_written_twice(store: Store) -> None:
    from inspector.store import StoreError

    store.save(long_turn(1))
    with pytest.raises(StoreError, match="run 'long0000turn' is already in"):
        store.save(long_turn(1))
    assert store.load("long0000turn") == long_turn(1)  # the failed save left nothing behind


def test_a_long_reply_and_feedback_are_not_stored_again_in_the_event_log(
    store: Store, tmp_path: Path
) -> None:
    # Issue 13 item 11: streamed pieces, verdicts and feedback the finished step holds are
    # stored as references to it; reading rebuilds exactly the events the engine emitted.
    reply = "a long draft, sentence after sentence. " * 3000
    source = {
        "name": "long-reply",
        "model": {"provider": "scripted", "name": "m", "stream": True},
        "prompt": {"user": "write"},
        "validators": [{"kind": "max_length", "max": 100, "feedback": "Shorter. " * 500}],
        "policy": {"max_attempts": 2},
        "script": [{"text": reply, "reasoning": "think " * 200}, {"text": "short"}],
    }
    scenario = scenario_from_dict(source, source="long.toml", base_dir=tmp_path)
    record, seen = record_turn(store, scenario)
    stored = store.events(record.run_id)
    assert dumped([s.event for s in stored]) == dumped(seen)
    conn = sqlite3.connect(store.path)
    rows = conn.execute(
        "SELECT kind, body FROM events WHERE run_id = ? AND body IS NOT NULL", (record.run_id,)
    ).fetchall()
    conn.close()
    kinds = {k for k, b in rows if b.startswith('{"$step":')}
    assert {"text_delta", "reasoning_delta", "verdicts", "feedback_injected"} <= kinds
    assert not any("sentence after" in b or "Shorter." in b or "think" in b for _, b in rows)
