"""Reading a run in bulk (store/reader.py ``steps``): step bodies and messages validated
``BATCH`` at a time from their JSON give the same record, field for field, as validating each
step from its parsed body did, whatever mix of plain bodies, bodies with large texts and pending
rows a batch holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from inspector.core.messages import ToolCall, user
from inspector.core.records import RunRecord, Step, Verdict
from inspector.store import Store, StoreUnusable, reader
from inspector.store.texts import TEXT_MIN, marked
from tests.store.conftest import record_demo
from tests.store.synthetic import every_shape, long_turn

ATTACHED = {"request", "verdicts", "raw"}


def varied_turn(steps: int) -> RunRecord:
    """A long turn whose steps differ: verdicts on some, a large text in some bodies (a
    reference to resolve, so not validated in bulk), attempts, feedback, raw bodies."""
    record = long_turn(steps)
    out: list[Step] = []
    for step in record.steps:
        changes: dict[str, object] = {"attempt": 1 + step.index // 4}
        if step.index % 3 == 0:
            changes["verdicts"] = [Verdict.failed("v", "r" * (TEXT_MIN if step.index % 6 else 3))]
            changes["feedback"] = [user("again")]
        if step.index % 5 == 0:
            assert step.response is not None
            long_text = f"{step.index} " + "y" * TEXT_MIN
            changes["response"] = step.response.model_copy(update={"text": long_text})
        out.append(step.model_copy(update=changes))
    return record.model_copy(update={"steps": out})


def expected_fields(conn: sqlite3.Connection, run_id: str) -> list[set[str]]:
    """What validating each step from its stored body plus request, verdicts and raw sets."""
    rows = conn.execute("SELECT body FROM steps WHERE run_id = ? ORDER BY idx", (run_id,))
    return [set(json.loads(body)) | ATTACHED for (body,) in rows]


@pytest.mark.parametrize("batch", [1, 3, 2_000])
def test_a_varied_run_loads_field_for_field_in_any_batch(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(reader, "BATCH", batch)
    record = varied_turn(23)
    store.save(record)
    loaded = store.load(record.run_id)
    assert loaded == record
    assert loaded.model_dump_json() == record.model_dump_json()
    conn = sqlite3.connect(tmp_path / "runs.sqlite3")
    bodies = [b for (b,) in conn.execute("SELECT body FROM steps ORDER BY idx")]
    assert 0 < sum(map(marked, bodies)) < len(bodies)  # some bodies refer to large texts
    assert [s.model_fields_set for s in loaded.steps] == expected_fields(conn, record.run_id)
    conn.close()
    requests = [s.request for s in loaded.steps]
    assert all(r.model_fields_set == set(type(r).model_fields) for r in requests)
    # Each request has its own tools list (the frame's template is not shared out).
    assert len({id(r.tools) for r in requests}) == len(requests)
    assert requests[-1].messages[0] is requests[0].messages[0]


def test_every_shape_and_recorded_demos_load_with_their_fields_set(
    store: Store, tmp_path: Path
) -> None:
    shapes = every_shape()
    store.save(shapes)
    recorded, _ = record_demo(store, "retry-feedback")
    conn = sqlite3.connect(tmp_path / "runs.sqlite3")
    for record in (shapes, recorded):
        loaded = store.load(record.run_id)
        assert loaded == record
        assert loaded.model_dump_json() == record.model_dump_json()
        fields = [s.model_fields_set for s in loaded.steps]
        assert fields == expected_fields(conn, record.run_id)
    conn.close()


def test_a_damaged_body_in_a_batch_is_refused_in_one_line(store: Store, tmp_path: Path) -> None:
    store.save(long_turn(5))
    conn = sqlite3.connect(tmp_path / "runs.sqlite3")
    with conn:
        conn.execute('UPDATE steps SET body = replace(body, \'"attempt":1\', \'"attempt":"x"\')')
    conn.close()
    with pytest.raises(StoreUnusable) as caught:
        store.load("long0000turn")
    message = str(caught.value)
    assert "\n" not in message and "damaged store: cannot read run long0000turn" in message


def test_json_values_in_a_bulk_read_body_read_as_json_loads_reads_them(store: Store) -> None:
    # pydantic-core parses the bodies now, not ``json``: numbers past 64 bits, float rounding,
    # subnormals, non-BMP text and a NaN / infinity (written as null) come back the same.
    record = long_turn(2)
    first = record.steps[0]
    assert first.response is not None
    arguments = {"big": 10**30, "sum": 0.1 + 0.2, "tiny": 1e-320, "inf": float("inf")}
    response = first.response.model_copy(
        update={
            "text": "😀 ∑ 12345678901234567890123",
            "tool_calls": [ToolCall(id="c", name="n", arguments=arguments)],
        }
    )
    changed = first.model_copy(update={"response": response, "latency_ms": float("nan")})
    record = record.model_copy(update={"steps": [changed, *record.steps[1:]]})
    store.save(record)
    loaded = store.load(record.run_id).steps[0]
    assert loaded.response is not None
    assert loaded.response.text == response.text
    assert loaded.response.tool_calls[0].arguments == {**arguments, "inf": None}
    assert loaded.latency_ms is None
