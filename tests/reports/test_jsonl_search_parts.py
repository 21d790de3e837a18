"""The JSONL export searches a group of step lines for secrets as the pieces made in it (a
step's fields, new messages, a request's fields, raw bodies), not as the lines repeating pieces
searched before: a secret in any of them, in a step after many clean groups, is redacted as the
lines dumped whole and redacted whole redact it, whatever the group size."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inspector.core.messages import assistant, user
from inspector.core.records import RawExchange, RunRecord, Step
from inspector.reports import json_pieces, jsonl
from inspector.reports.jsonl import jsonl_lines
from inspector.reports.redact import may_hold_secrets
from inspector.reports.synthetic_events import events_from_record
from tests.reports.exports_with_secrets import OPENAI_KEY, TOKEN
from tests.reports.test_jsonl_same_bytes import _line_by_line
from tests.store.synthetic import long_turn

AT = 19  # step 20 of 40: after groups of clean step lines at a group size of 700


def _changed(change: Callable[[Step], Step]) -> RunRecord:
    record = long_turn(40, run_id="partsecret01")
    steps = list(record.steps)
    steps[AT] = change(steps[AT])
    return record.model_copy(update={"steps": steps})


def _request(step: Step, **update: object) -> Step:
    return step.model_copy(update={"request": step.request.model_copy(update=update)})


CASES: dict[str, Callable[[Step], Step]] = {
    # in the step's own fields: its step_finished line and the record
    "error": lambda s: s.model_copy(update={"error": f"upstream said api_key={OPENAI_KEY}"}),
    # a request's fields of its own (a new system prompt): its step lines and the record
    "system": lambda s: _request(s, system=f"Authorization: Bearer {TOKEN}"),
    # a message only this request adds: its step_started line and the record
    "message": lambda s: _request(
        s, messages=[*s.request.messages, user(f"my key is {OPENAI_KEY}")]
    ),
    # the raw body sent: its step_finished line and the record
    "raw": lambda s: s.model_copy(
        update={
            "raw": RawExchange(
                request={"headers": {"Authorization": f"Bearer {TOKEN}"}, "messages": []},
                response=[],
            )
        }
    ),
}


@pytest.mark.parametrize("group", [1, 700, json_pieces.GROUP_CHARS])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_secret_in_a_later_step_s_pieces_is_redacted(
    name: str, group: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "GROUP_CHARS", group)
    record = _changed(CASES[name])
    events = events_from_record(record)
    lines = list(jsonl_lines(record, events))
    assert lines == _line_by_line(record, events)
    text = "\n".join(lines)
    assert OPENAI_KEY not in text and TOKEN not in text
    assert "[redacted]" in text


def test_clean_step_lines_are_searched_as_their_new_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[str] = []
    search = json_pieces.may_hold_secrets

    def recording(text: str) -> bool:
        searched.append(text)
        return search(text)

    monkeypatch.setattr(json_pieces, "may_hold_secrets", recording)
    record = long_turn(40, run_id="partsclean01")
    lines = list(jsonl_lines(record, events_from_record(record)))
    assert not may_hold_secrets("\n".join(lines))
    # Before the record's line (searched as it was): the system prompt and tools every step's
    # two lines write, searched once; less text searched than the step lines hold.
    before = [text for text in searched if '"kind":"run_finished"' not in text]
    assert sum(text.count('"system":"sys"') for text in before) == 1
    steps = [line for line in lines if '"kind":"step_' in line]
    assert 0 < sum(map(len, before)) < sum(map(len, steps))


@pytest.mark.parametrize("group", [1, json_pieces.GROUP_CHARS])
def test_a_secret_first_written_in_the_record_s_transcript_is_redacted(
    group: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "GROUP_CHARS", group)
    record = long_turn(40, run_id="partsecret02")
    answer = assistant(f"your key: api_key={OPENAI_KEY}")
    record = record.model_copy(update={"transcript": [*record.transcript[:-1], answer]})
    events = events_from_record(record)
    lines = list(jsonl_lines(record, events))
    assert lines == _line_by_line(record, events)
    assert OPENAI_KEY not in lines[-1] and "[redacted]" in lines[-1]


def test_the_record_s_transcript_written_before_is_not_searched_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[str] = []
    search = json_pieces.may_hold_secrets
    monkeypatch.setattr(json_pieces, "may_hold_secrets", lambda t: searched.append(t) or search(t))
    record = long_turn(40, run_id="partsclean02")
    lines = list(jsonl_lines(record, events_from_record(record)))
    (of_record,) = [text for text in searched if '"kind":"run_finished"' in text]
    assert '"transcript":0' in of_record
    assert record.transcript[-1].content == "done" and '"content":"done"' in of_record
    assert '"content":"done"' in lines[-1]
