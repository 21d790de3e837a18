"""The made-once encoders write exactly what ``json.dumps`` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.core.compact_json import dumps, dumps_spaced

VALUES: list[Any] = [
    {"q": "x"},
    {"a": [1, 2.5, None, True, False], "b": {"1": float("inf"), "2": float("-inf")}},
    {"é": 'ü\n\t"\\\u2028\x7f\x00', "nested": [{"k": [[]]}, {}]},
    [1e100, -0.0, 12345678901234567890, 0.1],
    "a string",
    "",
    42,
    None,
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_spaced_is_json_dumps(value: Any) -> None:
    assert dumps_spaced(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("value", VALUES)
def test_dumps_is_compact_json_dumps(value: Any) -> None:
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
