"""The JSONL export takes the lines of deltas and tool results from their stored JSON
(``Store.events_as_stored``, ``VERBATIM_KINDS``): byte for byte the lines the events' models
give, for every kind taken so, every code point, long and large bodies and secrets."""

from __future__ import annotations

import sqlite3
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from inspector.core import events as core_events
from inspector.core.events import (
    AttemptCleared,
    Event,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallDelta,
    ToolExecuted,
)
from inspector.core.records import ToolResult
from inspector.reports.jsonl import VERBATIM_KINDS, jsonl_lines
from inspector.store import Store, StoreUnusable
from inspector.store.models import AsStored
from tests.reports.exports_with_secrets import OPENAI_KEY, RECORDS, leaky_turn
from tests.reports.test_jsonl_same_bytes import _scenario

RUN = "run-é"
# Every code point but surrogates (no store holds one), in chunks, with JSON's own escapes.
CHUNK = 8192
EVERY = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
TEXTS = [
    '"\\/\b\f\n\r\t\x00\x1f\x7f\u2028',
    *("".join(EVERY[i : i + CHUNK]) for i in range(0, len(EVERY), CHUNK)),
]


def _kind_events(text: str, n: int) -> list[Event]:
    short = text[:900]
    return [
        TextDelta(run_id=RUN, index=n, text=short),
        ReasoningDelta(run_id=RUN, index=n, text=short[:10]),
        ToolCallDelta(
            run_id=RUN, index=n, call_index=0, id=short[:5], name=None, arguments_delta=short
        ),
        ToolCallDelta(run_id=RUN, index=n, call_index=1),
        # Under TEXT_MIN each, over it together: written again by ``messages.dumps``.
        ToolExecuted(
            run_id=RUN,
            index=n,
            result=ToolResult(tool_call_id="c", name="lookup", content=short, error=short[::-1]),
        ),
        # A large text: stored as a reference, so read through the model.
        ToolExecuted(
            run_id=RUN,
            index=n,
            result=ToolResult(tool_call_id="c", name="t", content=text, replayed=True, captured=""),
        ),
        AttemptCleared(run_id=RUN, index=n, attempt=2),
        TextDelta(run_id=RUN, index=n, text=f"my key is {OPENAI_KEY}"),  # redacted
        ToolExecuted(
            run_id=RUN,
            index=n,
            result=ToolResult(tool_call_id="c", name="x", content="x-api-key: pp123456"),
        ),
    ]


def _both_ways(store: Store, run_id: str) -> tuple[list[str], list[str], int]:
    record = RECORDS["leaky-turn"]()  # the header's: the same for both
    modelled = store.events(run_id)
    stored = store.events_as_stored(run_id, VERBATIM_KINDS)
    taken = sum(isinstance(e, AsStored) for e in stored)
    return list(jsonl_lines(record, modelled)), list(jsonl_lines(record, stored)), taken


def test_every_kind_and_code_point_exports_as_from_its_model(tmp_path: Path) -> None:
    record = leaky_turn().model_copy(update={"run_id": RUN, "steps": []})
    header = RunStarted.from_record(record)
    with Store.open(tmp_path / "runs.sqlite3") as store:
        sink = store.recorder()
        sink(header)
        for n, text in enumerate(TEXTS):
            for event in _kind_events(text, n):
                sink(event)
        sink(RunFinished(run_id=RUN, record=record))
        from_models, from_stored, taken = _both_ways(store, RUN)
        assert [e.event for e in store.events_as_stored(RUN, VERBATIM_KINDS)] == [
            e.event for e in store.events(RUN)
        ]
    assert from_stored == from_models
    # All but the large text's result (and the first text is not large): the ones with a
    # secret are handed out as stored too, and take the model's way when exported.
    assert taken == 8 * len(TEXTS) + 1
    assert {e.kind for e in _kind_events("x", 0)} == VERBATIM_KINDS
    assert OPENAI_KEY not in "".join(from_stored) and "pp123456" not in "".join(from_stored)


async def test_a_recorded_run_exports_as_from_its_models(tmp_path: Path) -> None:
    from inspector.core.loop import Turn
    from inspector.core.scenario import scenario_from_dict
    from inspector.providers.scripted import ScriptedProvider

    source = scenario_from_dict(_scenario(8), source="s.toml", base_dir=tmp_path)
    with Store.open(tmp_path / "runs.sqlite3") as store:
        turn = Turn(source, ScriptedProvider(source.script), core_events.fan_out(store.recorder()))
        run_id = (await turn.run()).run_id
        from_models, from_stored, taken = _both_ways(store, run_id)
        last = store.events(run_id)[-1].event
    assert from_stored == from_models
    assert taken >= 8 * 2  # a call's deltas and its result per step
    # The record's transcript is made of the requests' messages (each written once), and the
    # final answer no request re-sent.
    assert isinstance(last, RunFinished)
    sent = {id(m) for step in last.record.steps for m in step.request.messages}
    transcript = last.record.transcript
    assert len(transcript) > 8 and {id(m) for m in transcript[:-1]} <= sent


async def test_a_damaged_body_of_a_kind_taken_as_stored_fails_the_read(tmp_path: Path) -> None:
    from inspector.core.loop import Turn
    from inspector.core.scenario import scenario_from_dict
    from inspector.providers.scripted import ScriptedProvider

    db = tmp_path / "runs.sqlite3"
    source = scenario_from_dict(_scenario(2), source="s.toml", base_dir=tmp_path)
    with Store.open(db) as store:
        turn = Turn(source, ScriptedProvider(source.script), core_events.fan_out(store.recorder()))
        run_id = (await turn.run()).run_id
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE events SET body = ? WHERE kind = 'tool_call_delta'",
            ('{"kind":"tool_call_delta","index":"two","call_index":0}',),
        )
    with Store.open(db) as store, pytest.raises(StoreUnusable, match="damaged store"):
        store.events_as_stored(run_id, VERBATIM_KINDS)


def _plain(annotation: Any) -> bool:
    """Whether values of ``annotation`` are strings, integers, booleans, nulls or models of
    those only (what pydantic and ``json.dumps`` write alike)."""
    if annotation in (str, int, bool, type(None)):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return all(_plain(f.annotation) for f in annotation.model_fields.values())
    origin = get_origin(annotation)
    if origin is Literal:
        return all(isinstance(a, str | int | bool) for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return all(_plain(a) for a in get_args(annotation))
    return False


def test_kinds_taken_as_stored_hold_no_float_or_any() -> None:
    kinds = {
        cls.model_fields["kind"].default: cls
        for cls in vars(core_events).values()
        if isinstance(cls, type) and issubclass(cls, BaseModel) and "kind" in cls.model_fields
    }
    assert set(kinds) >= VERBATIM_KINDS
    for kind in VERBATIM_KINDS:
        assert _plain(kinds[kind]), kind
    assert not _plain(kinds["fallback_used"]) and not _plain(kinds["run_finished"])
