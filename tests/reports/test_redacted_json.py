"""``redacted_json`` writes exactly what the full walk (``redact`` then ``scrub_keys``) writes;
it only skips the walk when the text shows nothing to redact."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from inspector.reports.redact import redact, redacted_json, scrub_keys

KEY = "sk-proj-" + "A1b2C3d4" * 3


def _full(value: Any) -> str:
    return scrub_keys(json.dumps(redact(value), ensure_ascii=False, separators=(",", ":")))


@pytest.mark.parametrize(
    "value",
    [
        {"messages": [{"role": "user", "content": "plain text, nothing secret"}]},
        {"api_key_env": "OPENAI_API_KEY", "task-list": "risk-free desk-work"},
        {"headers": {"Authorization": "Bearer abcdefgh12345678"}},
        {"x": f"\n{KEY}"},
        {"x": f'"{KEY}'},
        {"x": f"\\{KEY}"},
        {"x": f"\x01{KEY}"},
        {"x": f"task{KEY}"},
        {"x": "Authorization\n: secret-value here"},
        {"x": "authorization\t=\tvalue"},
        {"PASSWORD": 12345},
        {"nested": {"Cookie": {"a": 1}}},
        {"x": "bearer abcdefgh12345678"},
        {"x": "BEARER\nabcdefgh12345678"},
        ["api-key: v", {"apiKey": "v"}, {"client_secret": ""}],
        {"base_url": None, "headers": {}, "params": [], "password": None, "x": 'url":null'},
        {"base_url": None, "url": "https://user:pw@example.com/?key=v"},
        {"headers": {}, "api_key": None, "x": f"{KEY}"},
        {"x": 'base_url":null, "password": "hunter2"'},
    ],
)
def test_same_as_the_full_walk(value: Any) -> None:
    assert redacted_json(value) == _full(value)


def test_a_key_holding_nothing_does_not_take_the_walk() -> None:
    # Every scenario's model section has these; a 10,000-entry script behind them was walked.
    from inspector.reports import redact as module

    value = {"model": {"base_url": None, "headers": {}, "params": {}}, "script": ["a"] * 3}
    text = json.dumps(value, separators=(",", ":"))
    assert not module.may_hold_secrets(text)
    assert module.may_hold_secrets(text.replace('"params":{}', '"params":{"k":1}'))
    assert module.may_hold_secrets(text.replace("null", '"http://u:p@h"'))
    assert redacted_json(value) == _full(value)


def test_same_as_the_full_walk_on_random_text() -> None:
    pieces = [
        "sk-",
        KEY[3:],
        "Bearer ",
        "bearer",
        "api_key",
        "Api-Key",
        "password",
        ":",
        "=",
        " ",
        "\n",
        "\t",
        '"',
        "\\",
        "\x02",
        "task",
        "x",
        "é",
        "}",
        ",",
        "cookie",
        "url",
        "null",
        "{}",
    ]
    rng = random.Random(18)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        key = rng.choice(["content", "text", "api_key", "Authorization", "note"])
        value = {key: text, "list": [text, {"inner": text}]}
        assert redacted_json(value) == _full(value), value
