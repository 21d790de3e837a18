"""``json_pieces.loads`` gives ``json.loads``'s value and errors, and parses a long text one
value at a time below its top levels (counted, not timed); a stored run of a long scenario
script loads the same record through it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.store import Store, json_pieces
from tests.store.synthetic import every_shape, long_turn
from tests.store.test_bulk_read import varied_turn

SAMPLES: list[Any] = [
    {},
    [],
    {"a": 1},
    [1, 2.5, -3e5, True, False, None, "x"],
    {"source": {"script": [{"text": 'é \u2603 \\ " \n', "n": i} for i in range(5)], "x": []}},
    {"deep": {"deeper": {"deepest": {"leaf": [[[1]]]}}}, "same": 1, "same ": 2},
    [{"k": {"a": [1, {"b": None}]}}, [], {}, "", 0],
]


@pytest.fixture
def another_thread() -> Iterator[None]:
    """A second thread alive (as a window's worker reads while the UI thread waits): a long
    text is parsed in pieces only then."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@pytest.mark.parametrize("value", SAMPLES)
@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("depth", [0, 1, 2, 3, 5])
def test_same_value_as_json_loads(value: Any, indent: int | None, depth: int) -> None:
    text = " \n" + json.dumps(value, indent=indent, ensure_ascii=False) + "\n "
    assert json_pieces._value(text, json_pieces._skip(text, 0), depth)[0] == json.loads(text)


def test_duplicate_keys_keep_the_last_as_json_loads_does() -> None:
    text = '{"a": 1, "a": {"b": 2, "b": 3}}' + " " * json_pieces.PIECES_MIN
    assert json_pieces.loads(text) == json.loads(text) == {"a": {"b": 3}}


@pytest.mark.parametrize(
    "bad",
    ['{"a" 1}', '{"a": 1,}', "[1 2]", "{a: 1}", "[1, 2", '{"a": [1, }', '{"a": 1} x', "[nan"],
)
@pytest.mark.usefixtures("another_thread")
def test_malformed_text_raises_json_decode_error(bad: str) -> None:
    text = bad + " " * json_pieces.PIECES_MIN  # long enough to be parsed in pieces
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        json_pieces.loads(text)


@pytest.mark.usefixtures("another_thread")
def test_a_long_text_is_parsed_one_value_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [{"text": f"reply {i}", "tool_calls": []} for i in range(3000)]
    value = {"run_id": "r", "scenario_source": {"script": script, "name": "n"}, "usage": {}}
    text = json.dumps(value)
    assert len(text) >= json_pieces.PIECES_MIN / 4
    text += " " * json_pieces.PIECES_MIN
    calls: list[int] = []
    scan = json_pieces._scan

    def counted(body: str, at: int) -> tuple[Any, int]:
        found: tuple[Any, int] = scan(body, at)
        calls.append(found[1] - at)
        return found

    monkeypatch.setattr(json_pieces, "_scan", counted)
    assert json_pieces.loads(text) == value
    assert max(calls) < 100  # each C call parses one script entry (or a key), not the text
    assert len(calls) > 3000


def test_a_short_text_is_one_json_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_pieces, "_value", None)  # not used below PIECES_MIN
    assert json_pieces.loads('{"a": [1, 2]}') == {"a": [1, 2]}


def test_a_long_text_is_one_json_loads_when_no_other_thread_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # the command line's process
    monkeypatch.setattr(json_pieces, "_value", None)  # nobody waits for the GIL: one call
    text = json.dumps({"script": ["x"] * 10}) + " " * json_pieces.PIECES_MIN
    assert json_pieces.loads(text) == {"script": ["x"] * 10}


def test_a_run_with_a_long_script_loads_the_same_record(tmp_path: Path) -> None:
    script = [{"text": f"draft {i} of a reply", "tool_calls": []} for i in range(6000)]
    record = long_turn(3).model_copy(update={"scenario_source": {"name": "s", "script": script}})
    with Store.open(tmp_path / "runs.sqlite3") as store:
        store.save(record)
        (record_json,) = store._conn.execute("SELECT record FROM runs").fetchone()
        assert len(record_json) >= json_pieces.PIECES_MIN  # read in pieces
        assert store.load(record.run_id) == record


@pytest.mark.usefixtures("another_thread")
def test_a_run_read_with_every_text_in_pieces_is_the_same_record(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for record in (every_shape(), varied_turn(23)):
        store.save(record)
        whole = store.load(record.run_id)
        monkeypatch.setattr(json_pieces, "PIECES_MIN", 0)
        assert store.load(record.run_id).model_dump_json() == whole.model_dump_json()
        monkeypatch.undo()
        assert whole == record
