"""A large stored JSON text parsed a piece at a time (store/json_pieces.py) is the value
``json.loads`` gives, and a run read that way is the same record."""

from __future__ import annotations

import json

import pytest

from inspector.store import Store, texts
from inspector.store.json_pieces import loads_in_pieces
from tests.store.synthetic import every_shape
from tests.store.test_bulk_read import varied_turn

TEXTS = [
    "{}",
    "[]",
    ' { "a" : [1, 2.5e-3, {"b": null}] , "a": "x\\u00e9\\"" } ',
    '[[[[1]]], {"k": [true, false, -0.0]}, "s", 1e400]',
    json.dumps({"s": {"script": [{"x": n / 7, "y": "é" * n} for n in range(40)]}, "n": 1e308}),
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("depth", [0, 1, 3, 9])
def test_the_value_is_json_loads(text: str, depth: int) -> None:
    value = loads_in_pieces(text, depth)
    assert value == json.loads(text)
    assert json.dumps(value) == json.dumps(json.loads(text))  # key order and duplicates too


@pytest.mark.parametrize("text", ["{", "[1,]", '{"a" 1}', "[1] x", "{1: 2}", '{"a": 1,}', ""])
def test_bad_json_fails_as_json_loads_does(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads_in_pieces(text)


def test_a_run_read_with_every_text_in_pieces_is_the_same_record(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for record in (every_shape(), varied_turn(23)):
        store.save(record)
        whole = store.load(record.run_id)
        monkeypatch.setattr(texts, "PIECES_FROM", 0)
        assert store.load(record.run_id).model_dump_json() == whole.model_dump_json()
        monkeypatch.undo()
        assert whole == record
