"""The runs list's summaries: the header fields they read (overrides, via), each header
parsed once (a scripted turn's header holds its whole scenario: 2.4 MB for 10,000 attempts)."""

from __future__ import annotations

import sqlite3

from inspector.core.records import RunRecord
from inspector.store import Store
from tests.store.conftest import record_demo
from tests.store.synthetic import long_turn


def test_summaries_read_overrides_and_via_from_the_header(store: Store) -> None:
    plain, _ = record_demo(store, "retry-feedback")
    changed = long_turn(2, run_id="sets00000001").model_copy(
        update={"overrides": ["policy.feedback_history=latest", "budgets.max_steps=3"]}
    )
    proxied: RunRecord = long_turn(2, run_id="prox00000001").model_copy(update={"via": "proxy"})
    store.save(changed)
    store.save(proxied)
    listed = {s.run_id: s for s in store.runs()}
    assert (listed[plain.run_id].overrides, listed[plain.run_id].via) == ([], None)
    assert listed[changed.run_id].overrides == changed.overrides
    assert listed[changed.run_id].via is None
    assert (listed["prox00000001"].overrides, listed["prox00000001"].via) == ([], "proxy")
    assert "via" not in listed[plain.run_id].model_dump()  # absent, as `runs --json` prints it


def test_a_header_without_those_fields_lists_with_none(store: Store) -> None:
    store.save(long_turn(1, run_id="bare00000001"))
    conn: sqlite3.Connection = store._conn
    conn.execute(
        "UPDATE runs SET header = json_remove(header, '$.overrides', '$.via')"
        " WHERE run_id = 'bare00000001'"
    )
    [bare] = store.runs()
    assert (bare.overrides, bare.via) == ([], None)


def test_each_runs_header_is_parsed_once(store: Store) -> None:
    for n in range(3):
        store.save(long_turn(1, run_id=f"once0000000{n}"))
    conn: sqlite3.Connection = store._conn
    headers = [row[0] for row in conn.execute("SELECT header FROM runs")]
    real = sqlite3.connect(":memory:")  # the built-in json_extract, the one this replaces
    parsed: list[str] = []

    def counted(document: str, *paths: str) -> object:
        if document in headers:
            parsed.append(document)
        return real.execute(
            f"SELECT json_extract(?{', ?' * len(paths)})", (document, *paths)
        ).fetchone()[0]

    conn.create_function("json_extract", -1, counted)  # overrides the built-in here
    listed = store.runs()
    assert [s.overrides for s in listed] == [[], [], []]
    assert len(parsed) == len(headers) == 3  # one json_extract per header, not one per field
