"""``export --format otel`` of a long run whose history grows with it: the file and the memory
follow the steps, not steps x history. A chat span carries at most ``input_messages`` of its
request's messages (the last ones), the rest being the previous span's, and ``import`` puts them
back; the document is written span by span."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.messages import user
from inspector.core.records import RunRecord
from inspector.formats import genai as g
from inspector.formats import otel_export
from inspector.formats.otel_export import otlp_json_chunks, run_to_otlp
from inspector.formats.otel_import import runs_from_otlp
from inspector.formats.otlp_json import spans
from inspector.store import Store
from tests.formats.conftest import Capsys
from tests.store.synthetic import long_turn

SKIPPED = g.ns("step.input_messages_skipped")


def _chats(document: Any) -> list[Any]:
    return [s for s in spans(document) if s.attributes.get(g.OPERATION) == g.CHAT]


def _input_counts(record: RunRecord, **options: Any) -> list[int]:
    return [
        len(json.loads(s.attributes[g.INPUT_MESSAGES]))
        for s in _chats(run_to_otlp(record, **options))
    ]


def _round_trip(record: RunRecord, **options: Any) -> RunRecord:
    text = "".join(otlp_json_chunks(record, **options))
    (back,) = runs_from_otlp(json.loads(text), "run.otlp.json", lambda: "unused")
    return back


def _without_raw(record: RunRecord) -> list[dict[str, Any]]:
    return [s.model_dump(mode="json", exclude={"raw"}) for s in record.steps]


def test_a_chat_span_carries_at_most_the_cap_so_the_file_grows_with_the_steps() -> None:
    counts = _input_counts(long_turn(300, raw=False), input_messages=40)
    assert max(counts) == 40
    assert counts[:20] == [2 * i + 1 for i in range(20)]  # short requests whole, as before
    # Written input messages: steps x cap at most, not the 90,000 of the whole histories.
    assert sum(counts) <= 300 * 40


def test_the_default_cap_leaves_a_short_run_as_it_was() -> None:
    record = long_turn(30, raw=False)
    assert _input_counts(record) == _input_counts(record, input_messages=None)
    assert all(SKIPPED not in s.attributes for s in _chats(run_to_otlp(record)))
    assert otel_export.INPUT_MESSAGES == 100


@pytest.mark.parametrize("cap", [1, 7, 100, None])
def test_a_capped_export_imports_back_to_the_same_requests(cap: int | None) -> None:
    record = long_turn(120, raw=False)
    back = _round_trip(record, input_messages=cap)
    assert _without_raw(back) == _without_raw(record)


def test_only_a_prefix_shared_with_the_previous_span_is_left_out() -> None:
    record = long_turn(60, raw=False)
    fresh = [user("start again"), *record.steps[40].request.messages[-3:]]
    record.steps[40].request.messages = fresh  # the history cleared: nothing in common
    document = run_to_otlp(record, input_messages=2)
    attrs = [s.attributes for s in _chats(document)]
    assert SKIPPED not in attrs[40] and len(json.loads(attrs[40][g.INPUT_MESSAGES])) == 4
    # Step 42 goes back to the whole history, which step 41 does not have: written whole.
    assert SKIPPED not in attrs[41] and len(json.loads(attrs[41][g.INPUT_MESSAGES])) == 83
    assert attrs[42][SKIPPED] == 83 and len(json.loads(attrs[42][g.INPUT_MESSAGES])) == 2
    assert _without_raw(_round_trip(record, input_messages=2)) == _without_raw(record)


def test_each_message_is_made_json_once_whatever_the_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = long_turn(150, raw=False)
    made: list[int] = []
    to_genai = g.to_genai
    monkeypatch.setattr(g, "to_genai", lambda m: made.append(id(m)) or to_genai(m))
    for _ in otlp_json_chunks(record, input_messages=None):
        pass
    distinct = {id(m) for s in record.steps for m in s.request.messages}
    assert sorted(made) == sorted(distinct)


def test_the_document_is_written_span_by_span_in_a_fraction_of_its_size() -> None:
    record = long_turn(300, raw=False)
    tracemalloc.start()
    try:
        size = sum(len(chunk) for chunk in otlp_json_chunks(record, input_messages=None))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Every history written whole (the cap off) makes a file of ~8 MB; held at once it would
    # take at least that, as the document and its text did.
    assert size > 5_000_000
    assert peak < size / 4
    text = "".join(otlp_json_chunks(record, input_messages=None))
    assert json.loads(text) == run_to_otlp(record, input_messages=None)


def test_export_input_messages_option(capsys: Capsys, tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    with Store.open(db) as store:
        store.save(long_turn(130, raw=False))
    out = tmp_path / "run.otlp.json"
    base = ["export", "long0000turn", "--format", "otel", "--db", str(db), "--out", str(out)]
    assert main(base) == 0
    assert (
        max(
            len(json.loads(s.attributes[g.INPUT_MESSAGES]))
            for s in _chats(json.loads(out.read_text()))
        )
        == 100
    )
    assert main([*base, "--input-messages", "all"]) == 0
    assert (
        max(
            len(json.loads(s.attributes[g.INPUT_MESSAGES]))
            for s in _chats(json.loads(out.read_text()))
        )
        == 259
    )
    capsys.readouterr()
    assert main([*base, "--input-messages", "0"]) == 2
    assert "--input-messages '0': a number from 1, or all" in capsys.readouterr().err


def test_an_import_reads_each_message_once_and_shares_one_history(tmp_path: Path) -> None:
    record = long_turn(200, raw=False)
    back = _round_trip(record, input_messages=7)
    assert _without_raw(back) == _without_raw(record)
    histories = [s.request.messages for s in back.steps]
    # Every request a view of one list (issue 18: not a list per request, steps x history).
    assert len({id(h.items) for h in histories}) == 1  # type: ignore[attr-defined]
    last = histories[-1]
    assert all(h[i] is last[i] for h in histories[::20] for i in range(len(h)))
    with Store.open(tmp_path / "runs.sqlite3") as store:
        store.save(back)
        assert _without_raw(store.load(back.run_id)) == _without_raw(record)


def test_an_import_whose_history_drops_messages_keeps_the_earlier_requests() -> None:
    record = long_turn(40, raw=False)
    record.steps[20].request.messages = [user("start again")]  # nothing in common
    record.steps[21].request.messages = [user("start again"), user("and again")]
    back = _round_trip(record, input_messages=3)
    assert _without_raw(back) == _without_raw(record)
