"""The JSONL export's faster ways write what the general ones write: step lines put together
from text (``_STEP_LINES``) and dumped whole; lines searched for secrets in groups of any size
and one by one; the record's steps left out of its search once their own lines were found
clean; a request's fields kept by the identity of their values; chunks and lines."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from inspector.core.compact_json import dumps
from inspector.core.events import RunFinished, fan_out
from inspector.core.loop import Turn
from inspector.core.records import RunRecord, StepRequest, ToolResult
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider
from inspector.reports import json_pieces, jsonl
from inspector.reports.jsonl import jsonl_chunks, jsonl_lines, number
from inspector.reports.jsonl_requests import _BY_IDENTITY, RequestDeltas
from inspector.reports.synthetic_events import TimedEvent, events_from_record
from inspector.store import Store
from tests.reports.exports_with_secrets import OPENAI_KEY, RECORDS, TOKEN
from tests.reports.test_jsonl_same_bytes import _line_by_line, _scenario
from tests.store.synthetic import TOOL, long_turn


def _one_secret_step() -> RunRecord:
    """A long turn whose step 7 alone holds a key (in a tool result): its lines, and its copy
    in the record, are redacted; every other line is clean."""
    record = long_turn(30, run_id="onesecret001")
    steps = list(record.steps)
    secret = ToolResult(tool_call_id="c7", name="lookup", content=f"key {OPENAI_KEY}")
    steps[6] = steps[6].model_copy(update={"tool_results": [secret]})
    return record.model_copy(update={"steps": steps})


CASES = {**{name: make for name, make in RECORDS.items()}, "one-secret-step": _one_secret_step}


@pytest.mark.parametrize("group", [1, 700, json_pieces.GROUP_CHARS])
@pytest.mark.parametrize("name", sorted(CASES))
def test_lines_are_the_lines_dumped_whole_whatever_the_group(
    name: str, group: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "GROUP_CHARS", group)
    record = CASES[name]()
    events = events_from_record(record)
    synthesized = name.startswith("imported")
    lines = list(jsonl_lines(record, events, synthesized=synthesized))
    assert lines == _line_by_line(record, events, synthesized)
    assert "".join(jsonl_chunks(record, events, synthesized=synthesized)) == "".join(
        line + "\n" for line in lines
    )


def test_the_record_s_copy_of_a_step_with_a_secret_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(jsonl, "GROUP_CHARS", 1)  # every line its own group: steps found clean
    record = _one_secret_step()
    lines = list(jsonl_lines(record, events_from_record(record)))
    assert OPENAI_KEY not in "".join(lines)
    assert lines[-1].count("[redacted]") == 1  # the record: step 7's tool result
    assert sum("[redacted]" in line for line in lines) == 3  # its tool_executed, step, record


def test_step_lines_written_from_text_are_the_models_dumps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert jsonl._STEP_LINES  # the shape checked at import is today's
    for name, make in sorted(CASES.items()):
        record = make()
        events = events_from_record(record)
        fast = list(jsonl_lines(record, events))
        monkeypatch.setattr(jsonl, "_STEP_LINES", False)
        assert list(jsonl_lines(record, events)) == fast, name
        monkeypatch.undo()


async def test_a_recorded_run_with_secrets_exports_the_same_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = scenario_from_dict(_scenario(12), source="s.toml", base_dir=tmp_path)
    with Store.open(tmp_path / "runs.sqlite3") as store:
        turn = Turn(source, ScriptedProvider(source.script), fan_out(store.recorder()))
        run_id = (await turn.run()).run_id
        stored = store.events_as_stored(run_id, jsonl.VERBATIM_KINDS)
        record = store.load(run_id)
    lines = list(jsonl_lines(record, stored))
    assert lines == _line_by_line(record, stored)
    monkeypatch.setattr(jsonl, "GROUP_CHARS", 1)
    monkeypatch.setattr(jsonl, "_STEP_LINES", False)
    assert list(jsonl_lines(record, stored)) == lines
    for secret in (OPENAI_KEY, TOKEN, "pp123456"):
        assert secret not in "".join(lines)


def test_request_fields_are_kept_by_the_identity_of_their_values() -> None:
    assert _BY_IDENTITY  # StepRequest's fields are the ones the key is made of
    tools = [TOOL]
    first = StepRequest(system="sys", messages=[], tools=tools, tool_choice="auto")
    same_values = first.model_copy(update={"tools": list(tools)})  # a list of its own
    other_tool = first.model_copy(update={"tools": [TOOL.model_copy(update={"name": "x"})]})
    deltas = RequestDeltas()
    a = deltas._fields(first)
    assert deltas._fields(same_values) is a
    b = deltas._fields(other_tool)
    assert b is not a and '"name":"x"' in b.text
    for request, piece in ((first, a), (other_tool, b)):
        assert piece.text == dumps(request.model_dump(mode="json", exclude={"messages"}))


@pytest.mark.parametrize(
    "value", [0.0, -0.0, 12.345, 1e-05, 1e16, 5e-324, math.inf, -math.inf, math.nan, 3, True]
)
def test_a_number_is_written_as_json_dumps_writes_it(value: float) -> None:
    assert number(value) == dumps(value)


def _with_scenario(events: list[TimedEvent], source: dict[str, object]) -> list[TimedEvent]:
    """``events`` whose run_started holds ``source`` as its scenario source."""
    first = events[0]
    started = first.event.model_copy(update={"scenario_source": source})
    return [TimedEvent(first.t_ms, started), *events[1:]]


@pytest.mark.parametrize("group", [1, json_pieces.GROUP_CHARS])
def test_the_scenario_source_is_written_once_and_searched_once(
    group: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "GROUP_CHARS", group)
    record = long_turn(5, run_id="scenario0001")
    model: dict[str, object] = {"name": "m"}
    source = {"script": [{"reply": f"reply-{n}", "n": n} for n in range(20)], "model": model}
    source["judge"] = model  # held twice here, not in run_started's copy
    record = record.model_copy(update={"scenario_source": source})
    # read from a store, the record's source is another object holding the same values
    events = _with_scenario(events_from_record(record), json.loads(json.dumps(source)))
    assert events[0].event.scenario_source["judge"] is not events[0].event.scenario_source["model"]
    made: list[str] = []
    field_piece = jsonl._field_piece
    monkeypatch.setattr(jsonl, "_field_piece", lambda m, f: made.append(f) or field_piece(m, f))
    searched: list[str] = []
    search = json_pieces.may_hold_secrets
    monkeypatch.setattr(json_pieces, "may_hold_secrets", lambda t: searched.append(t) or search(t))
    lines = list(jsonl_lines(record, events))
    assert made == ["scenario_source"]  # run_started's piece serves the record
    assert "".join(searched).count('"reply-19"') == 1
    assert lines[-1].count('"reply-19"') == 1
    assert lines == _line_by_line(record, events, False)


@pytest.mark.parametrize(
    "other",
    [
        {"script": [{"reply": "x" * 50, "n": 1.0}], "model": {}},  # == the record's, a float
        {"model": {}, "script": [{"reply": "x" * 50, "n": 1}]},  # == the record's, key order
        {"script": [], "model": {"headers": {"Authorization": f"Bearer {TOKEN}"}}},
    ],
)
def test_a_record_whose_scenario_source_differs_writes_its_own(
    other: dict[str, object],
) -> None:
    record = long_turn(3, run_id="scenario0002")
    source = {"script": [{"reply": "x" * 50, "n": 1}], "model": {}}
    record = record.model_copy(update={"scenario_source": source})
    events = _with_scenario(events_from_record(record), other)
    lines = list(jsonl_lines(record, events))
    assert lines == _line_by_line(record, events, False)
    assert TOKEN not in "".join(lines)


def test_a_secret_in_the_scenario_source_is_redacted_in_both_lines() -> None:
    record = long_turn(3, run_id="scenario0003")
    source = {"model": {"headers": {"x-api-key": OPENAI_KEY}}, "note": f"Bearer {TOKEN}"}
    record = record.model_copy(update={"scenario_source": source})
    events = _with_scenario(events_from_record(record), copy.deepcopy(source))
    lines = list(jsonl_lines(record, events))
    assert lines == _line_by_line(record, events, False)
    joined = "".join(lines)
    assert OPENAI_KEY not in joined and TOKEN not in joined
    assert '"x-api-key":"[redacted]"' in lines[1] and '"x-api-key":"[redacted]"' in lines[-1]


def _with_system(record: RunRecord, system: str) -> RunRecord:
    """``record`` whose requests hold ``system``, without raw exchanges (the record's copy of a
    raw body is another delta: its step is searched again)."""
    steps = [
        s.model_copy(
            update={"request": s.request.model_copy(update={"system": system}), "raw": None}
        )
        for s in record.steps
    ]
    return record.model_copy(update={"steps": steps})


@pytest.mark.parametrize("secret", [False, True])
def test_request_fields_every_step_shares_are_written_as_dumped(
    secret: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "GROUP_CHARS", 1)  # every line its own group
    system = f"You hold {OPENAI_KEY}" if secret else "You are system-marker."
    # as loaded from a store: every request shares one system prompt and tools, and the
    # record's steps are the step events'
    record = _with_system(long_turn(20, run_id="fields000001"), system)
    events = events_from_record(record)
    events[-1] = TimedEvent(events[-1].t_ms, RunFinished(run_id=record.run_id, record=record))
    lines = list(jsonl_lines(record, events))
    assert lines == _line_by_line(record, events, False)
    assert OPENAI_KEY not in "".join(lines)
