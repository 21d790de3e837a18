"""Each large text stored once (issue 13 item 11): in ``texts``, referenced from every row that
held it, shared by runs, one string when loaded; long raw responses compressed."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.events import TextDelta
from inspector.core.messages import ToolCall, assistant
from inspector.core.records import RawExchange, RunRecord, Verdict
from inspector.store import Store, StoreError, StoreUnusable, recorder, texts_migration
from inspector.store.schema import SCHEMA_VERSION, current_version
from inspector.store.texts import TEXT_MIN, ZIP_MIN
from tests.helpers.scenarios import write_scenario
from tests.store.fixtures.make_v6_store import EXPECTED, STORE, outputs, prose, scenario
from tests.store.synthetic import every_shape
from tests.store.test_opening_edges import _fill, _tiny_tmpfs

# Every JSON column a large text could hide in.
JSON_COLUMNS = (
    ("messages", "body"),
    ("frames", "body"),
    ("steps", "body"),
    ("steps", "raw_response"),
    ("runs", "header"),
    ("runs", "record"),
    ("events", "body"),
)


def long_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if len(value) >= TEXT_MIN else []
    if isinstance(value, list):
        return [s for v in value for s in long_strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in long_strings(v)]
    return []


def inline_long_strings(path: Path) -> list[str]:
    """Every string of ``TEXT_MIN`` characters or more still inside a row."""
    conn = sqlite3.connect(path)
    found: list[str] = []
    for table, column in JSON_COLUMNS:
        for (body,) in conn.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL"):
            found += long_strings(json.loads(body))
    for column in ("reason", "feedback"):
        sql = f"SELECT {column} FROM verdicts WHERE length({column}) >= ?"
        found += [r[0] for r in conn.execute(sql, (TEXT_MIN,))]
    conn.close()
    return found


def texts(path: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT hash, zipped FROM texts ORDER BY hash").fetchall()
    conn.close()
    return rows


@pytest.fixture
def v6_copy(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite3"
    shutil.copyfile(STORE, path)
    return path


def run_ids() -> list[str]:
    return (EXPECTED / "runs.txt").read_text(encoding="utf-8").split()


def test_the_migration_leaves_no_large_text_inline(v6_copy: Path) -> None:
    assert inline_long_strings(v6_copy)  # version 6 kept them in the rows
    Store.open(v6_copy).close()
    assert inline_long_strings(v6_copy) == []
    stored = texts(v6_copy)
    # Two replies, the feedback, the tool result, the saved run's reply: once each, although
    # two runs hold them; and the 78 KiB streamed raw response, compressed.
    assert len(stored) == 6 and sum(z for _, z in stored) == 1


def test_a_migration_that_fails_half_way_leaves_version_6(
    v6_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = texts_migration.write

    def write_then_fail(conn: sqlite3.Connection, rows: list[Any]) -> None:
        calls.append(rows)
        if len(calls) == 3:
            raise sqlite3.OperationalError("disk I/O error")
        real(conn, rows)

    monkeypatch.setattr(texts_migration, "write", write_then_fail)
    with pytest.raises(StoreError, match="disk I/O error"):
        Store.open(v6_copy)
    conn = sqlite3.connect(v6_copy)
    assert current_version(conn) == 6
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "texts" not in tables
    conn.close()
    monkeypatch.setattr(texts_migration, "write", real)
    got = outputs(v6_copy, run_ids())
    assert got[f"{run_ids()[1]}.record.json"] == (
        EXPECTED / f"{run_ids()[1]}.record.json"
    ).read_text(encoding="utf-8")


def _record_scenario(db: Path, path: Path) -> str:
    out = io.StringIO()
    assert main(["run", str(path), "--db", str(db), "--json"], out=out) == 0
    return str(json.loads(out.getvalue())["run_id"])


def test_the_same_texts_in_another_run_are_the_same_rows(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    db = tmp_path / "runs.sqlite3"
    first = _record_scenario(db, path)
    once = texts(db)
    second = _record_scenario(db, path)
    assert texts(db) == once and len(once) == 4  # two replies, feedback, tool result
    assert inline_long_strings(db) == []
    with Store.open(db) as store:
        a, b = store.load(first), store.load(second)
    assert (
        a.model_dump(exclude={"run_id", "started_at", "duration_ms"}, mode="json")["steps"][2][
            "response"
        ]
        == b.model_dump(mode="json")["steps"][2]["response"]
    )


def test_long_streamed_pieces_written_early_leave_no_text_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pieces written before their step finishes (a long stream is written in parts) become
    # references to the step afterwards: a text of their own would be left with no reader.
    monkeypatch.setattr(recorder, "MAX_BUFFERED", 2)
    words = " ".join(prose(seed, 1500).replace(" ", "-") for seed in (11, 12, 13))
    path = write_scenario(
        tmp_path,
        f"""
        name = "long-words"
        [model]
        provider = "scripted"
        stream = true
        [prompt]
        user = "Go."
        [[script]]
        text = "{words}"
        """,
    )
    db = tmp_path / "runs.sqlite3"
    run_id = _record_scenario(db, path)
    assert len(texts(db)) == 1  # the reply, once
    conn = sqlite3.connect(db)
    pieces = conn.execute(
        "SELECT body FROM events WHERE run_id = ? AND kind = 'text_delta'", (run_id,)
    ).fetchall()
    conn.close()
    assert len(pieces) == 3 and all(b.startswith('{"$step":') for (b,) in pieces)
    with Store.open(db) as store:
        record = store.load(run_id)
        events = [e.event for e in store.events(run_id)]
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == record.output == words


def test_a_loaded_text_is_one_string_wherever_the_run_refers_to_it(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    run_id = _record_scenario(db, scenario(tmp_path))
    with Store.open(db) as store:
        record = store.load(run_id)
        events = store.events(run_id)
    reply = record.steps[-1].response.text  # type: ignore[union-attr]
    assert len(reply) >= TEXT_MIN and record.output is reply
    assert record.transcript[-1].content is reply
    feedback = record.steps[1].verdicts[0].feedback
    assert feedback is not None and len(feedback) >= TEXT_MIN
    assert record.steps[1].feedback[0].content is feedback
    assert record.steps[2].request.messages[-1].content is feedback
    assert record.scenario_source["validators"][0]["feedback"] is feedback
    # The event log's record shares them too.
    finished = events[-1].event
    assert finished.kind == "run_finished"
    assert finished.record.output is finished.record.steps[-1].response.text  # type: ignore[attr-defined]


def big_raw_record() -> RunRecord:
    """A saved run whose raw responses hold a reply and a long stream, and data shaped like the
    store's own references."""
    record = every_shape("bigraw000001")
    stream = {"status": 200, "events": [f'{{"delta":"{w} "}}' for w in prose(9, 30_000).split()]}
    odd = {"$text": "not a reference", "nested": [{"$json": 1}, {"$lit": {"$text": "x"}}]}
    steps = list(record.steps)
    steps[0] = steps[0].model_copy(
        update={"raw": RawExchange(request={"odd": [odd, {"$text": "y"}]}, response=stream)}
    )
    steps[2] = steps[2].model_copy(
        update={"raw": RawExchange(request=steps[2].raw.request, response={"$lit": odd})}  # type: ignore[union-attr]
    )
    # A long verdict reason, and tool-call arguments shaped like a reference in a message.
    long_reason = Verdict.failed("python:check", prose(10, 3000), feedback="Shorter.")
    call = ToolCall(id="t9", name="lookup", arguments={"$text": prose(11, 1500)})
    request = steps[3].request.model_copy(
        update={"messages": [*steps[3].request.messages, assistant(None, (call,))]}
    )
    steps[3] = steps[3].model_copy(update={"verdicts": [long_reason], "request": request})
    return record.model_copy(update={"steps": steps, "output": {"$text": prose(8, 2000)}})


def test_a_long_raw_response_is_compressed_and_round_trips(store: Store) -> None:
    record = big_raw_record()
    assert len(json.dumps(record.steps[0].raw.response)) >= ZIP_MIN  # type: ignore[union-attr]
    store.save(record)
    assert store.load(record.run_id) == record
    zipped, size = store._conn.execute(
        "SELECT zipped, length(body) FROM texts ORDER BY length(body) DESC LIMIT 1"
    ).fetchone()
    assert zipped == 1 and size < ZIP_MIN / 4
    reason_text = store._conn.execute(
        "SELECT reason, reason_text FROM verdicts WHERE run_id = ? AND idx = 4", (record.run_id,)
    ).fetchone()
    assert reason_text[0] == "" and reason_text[1] is not None
    raw = store._conn.execute(
        "SELECT raw_response FROM steps WHERE run_id = ? AND idx = 1", (record.run_id,)
    ).fetchone()[0]
    assert raw.startswith('{"$json":')


def test_a_damaged_compressed_text_is_refused_in_one_line(store: Store) -> None:
    record = big_raw_record()
    store.save(record)
    store._conn.execute("UPDATE texts SET body = X'00ff00ff' WHERE zipped = 1")
    store._conn.commit()
    with pytest.raises(StoreUnusable, match=r"damaged store: .*cannot be decompressed"):
        store.load(record.run_id)


def test_a_migrated_store_reads_on_a_full_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _tiny_tmpfs(tmp_path / "mnt", size="4m") as mnt:
        path = mnt / "runs.sqlite3"
        shutil.copyfile(STORE, path)
        Store.open(path).close()  # migrated while there was room
        _fill(mnt)
        with pytest.raises(StoreError):
            Store.open(path)
        run_id = run_ids()[1]
        out = io.StringIO()
        assert main(["export", run_id, "--format", "html", "--db", str(path)], out=out) == 0
        assert "opened read-only" in capsys.readouterr().err
        expected = (EXPECTED / f"{run_id}.export.html").read_text(encoding="utf-8")
        assert f"exit 0\n{out.getvalue()}" == expected


def test_an_unmigrated_store_on_a_full_disk_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _tiny_tmpfs(tmp_path / "mnt", size="4m") as mnt:
        path = mnt / "runs.sqlite3"
        shutil.copyfile(STORE, path)
        _fill(mnt)
        assert main(["runs", "--db", str(path)]) == 1
        err = capsys.readouterr().err
        # The migration cannot be written, and this version does not read version 6 in place.
        assert err.count("\n") == 1 and "database or disk is full" in err, err


def test_a_store_newer_than_the_texts_schema_is_refused_in_one_line(
    v6_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Store.open(v6_copy).close()
    conn = sqlite3.connect(v6_copy)
    with conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.close()
    assert main(["export", run_ids()[1], "--db", str(v6_copy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is newer than this agent-inspector" in err
