"""A run's scenario source in its stored form: entries with nothing to redact or refer to are
kept as they are (no walk), and the result is always the walk's (``encode(redact(source))``)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from inspector.core.compact_json import dumps
from inspector.core.credentials import REDACTED, redact_scenario_source, source_may_redact
from inspector.store.texts import TEXT_MIN, TextWriter
from inspector.store.writer import stored_source

LONG = "y" * TEXT_MIN
QUOTED_LONG = '\\"' * (TEXT_MIN // 2)  # short pieces once split at quotes, long as a text

SCRIPT = [{"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}] * 50 + [{"text": "ok"}]
MODEL = {
    "provider": "openai",
    "name": "m",
    "base_url": "https://user:pw@example.test/v1",
    "headers": {"Authorization": "Bearer abcdefghijkl", "X-Build": "7"},
    "safe_headers": ["X-Build"],
    "params": {"api_key": "k", "seed": 1},
}

VALUES: list[Any] = [
    "plain",
    LONG,
    LONG[:-1],
    QUOTED_LONG,
    "Bearer abcdefghijkl",
    "bearer",
    {"$text": "x"},
    {"$lit": {"a": 1}},
    {"headers": {"Authorization": "t"}},
    {"URL": "https://u:p@h/"},
    {"query": {"token": "t"}},
    {"scenario_source": {"model": MODEL}},
    [1, 2.5, None, True, "é\n\u2028"],
    {"nested": [{"deeper": LONG}]},
]


def walked(source: Any) -> tuple[Any, list[Any]]:
    texts = TextWriter()
    return texts.encode(redact_scenario_source(source)), texts.new


def fast(source: Any) -> tuple[Any, list[Any]]:
    texts = TextWriter()
    return stored_source(texts, source), texts.new


def same(a: Any, b: Any) -> bool:
    """Equal, key order included."""
    return dumps(a) == dumps(b)


@pytest.mark.parametrize(
    "source",
    [
        {"name": "s", "model": MODEL, "script": SCRIPT},
        {"name": "s", "model": {"provider": "scripted", "headers": {}}, "script": SCRIPT},
        {"script": SCRIPT},
        {"$text": "not a reference"},
        {"$json": {"headers": {"Authorization": "t"}}},
        *({"a": a, "b": b} for a, b in itertools.product(VALUES, repeat=2)),
        *({key: value} for key in ("x", "headers", "$lit", "Url") for value in VALUES),
        *VALUES,
    ],
)
def test_the_stored_source_is_the_walks(source: Any) -> None:
    stored, new_texts = fast(source)
    expected, expected_texts = walked(source)
    assert same(stored, expected)
    assert new_texts == expected_texts


def test_a_long_script_is_kept_as_it_is_and_the_model_redacted() -> None:
    source = {"name": "s", "model": MODEL, "script": SCRIPT}
    stored, _ = fast(source)
    assert stored["script"] is SCRIPT  # not walked, not copied
    assert stored["model"]["headers"]["Authorization"] == REDACTED
    assert stored["model"]["params"] == {"api_key": REDACTED, "seed": 1}


def test_what_the_checks_see() -> None:
    texts = TextWriter()
    assert not source_may_redact(dumps({"script": SCRIPT}))
    assert source_may_redact(dumps({"Headers": {}}))
    assert source_may_redact(dumps(["  BEARER abcdefghijkl"]))
    assert not texts.may_encode(dumps(["x" * (TEXT_MIN - 1)]))
    assert texts.may_encode(dumps(["x" * TEXT_MIN]))
    assert texts.may_encode(dumps([QUOTED_LONG]))  # escaped quotes do not cut a text short
    assert texts.may_encode(dumps({"$lit": 1}))
