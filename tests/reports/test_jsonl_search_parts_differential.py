"""Differential check of the piece-wise search for secrets (``json_pieces.written``'s
``parts``): seeded turns with one secret-shaped text placed in one piece (a step's fields, a
request's, a message, a raw body, a tool result, ``forced``, the transcript only, the run id),
after clean groups or not, some events dropped or repeated, run_started left out: the export
is each line dumped whole and redacted whole (``_line_by_line``), at group sizes from one line
to the default. Each omission of a piece from the search tried (a step's fields, a message, a
request's fields, a raw body, ``forced``, the run id, the transcript's new messages) fails it."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from inspector.core.messages import user
from inspector.core.records import Forced, RawExchange, RunRecord, Step, Verdict
from inspector.reports import json_pieces, jsonl
from inspector.reports.jsonl import jsonl_lines
from inspector.reports.synthetic_events import events_from_record
from tests.reports.exports_with_secrets import OPENAI_KEY, TOKEN
from tests.reports.test_jsonl_same_bytes import _line_by_line
from tests.store.synthetic import long_turn

# Secret-shaped texts, with what may come before them in a string (the ``sk-`` search looks
# at the character before; JSON escapes some of them).
_BEFORE = ["", " ", "\n", "\\", "é", "\u0001", '"', "x", "İ", "\t"]
_SECRETS: list[Callable[[random.Random], str]] = [
    lambda r: r.choice(_BEFORE) + OPENAI_KEY,
    lambda r: f"Bearer {TOKEN}",
    lambda r: f"api_key={TOKEN}",
    lambda r: f"Authorization: {TOKEN}",
    lambda r: f'{{"password": "{TOKEN}"}}',
    lambda r: f"Api_Key{r.choice(['', ' ', chr(34)])}{r.choice(':=')}{TOKEN}",
    lambda r: f"headers:{TOKEN}",
]


def _secret(r: random.Random) -> str:
    return r.choice(["", 'a"b ', "é "]) + r.choice(_SECRETS)(r) + r.choice(["", " tail", "\n"])


def _request(step: Step, **update: object) -> Step:
    return step.model_copy(update={"request": step.request.model_copy(update=update)})


def _placed(r: random.Random, record: RunRecord) -> RunRecord:
    steps = list(record.steps)
    at = r.randrange(len(steps))
    step, text = steps[at], _secret(r)
    where = r.randrange(12)
    if where == 0:
        step = step.model_copy(update={"error": text})
    elif where == 1:
        step = _request(step, system=text)
    elif where == 2:
        step = _request(step, messages=[*step.request.messages, user(text)])
    elif where == 3:
        results = [t.model_copy(update={"content": text}) for t in step.tool_results]
        step = step.model_copy(update={"tool_results": results})
    elif where == 4:
        body = r.choice(
            [{"headers": {"X-Key": text}, "messages": []}, {"url": text}, text, [text], None]
        )
        response = r.choice([[], text, {"x": text}, None])
        step = step.model_copy(update={"raw": RawExchange(request=body, response=response)})
    elif where == 5:
        step = step.model_copy(update={"feedback": [user(text)]})
    elif where == 6:
        verdict = Verdict(validator="v", ok=False, status="fail", reason=text)
        step = step.model_copy(update={"verdicts": [verdict]})
    elif where == 7:
        record = record.model_copy(update={"transcript": [*record.transcript, user(text)]})
    elif where == 8:  # one message object every later request and the transcript re-send
        message = user(text)
        for n in range(at, len(steps)):
            steps[n] = _request(steps[n], messages=[*steps[n].request.messages, message])
        step = steps[at]
        record = record.model_copy(update={"transcript": [*record.transcript, message]})
    elif where == 9:
        tools = [t.model_copy(update={"description": text}) for t in step.request.tools]
        step = _request(step, tools=tools)
    elif where == 10:
        forced = Forced(tool_choice={"type": "function", "name": text})
        step = step.model_copy(update={"forced": forced})
    else:
        assert step.response is not None
        step = step.model_copy(update={"response": step.response.model_copy(update={"text": text})})
    steps[at] = step
    return record.model_copy(update={"steps": steps})


@pytest.mark.parametrize("seed", range(0, 240, 40))
def test_the_piece_wise_search_redacts_what_the_whole_line_search_did(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for case in range(seed, seed + 40):
        r = random.Random(case)
        run_id = r.choice([f"diff{case:08d}", f"diff{case:08d}", f"Bearer {TOKEN}{case}"])
        record = _placed(r, long_turn(r.randint(2, 16), run_id=run_id, raw=r.random() < 0.8))
        events = events_from_record(record)
        if r.random() < 0.5:  # steps only in the record, no run_started, a line repeated
            kept = [e for e in events[1:] if e is events[-1] or r.random() < 0.6]
            kept = events[: r.randint(0, 1)] + kept
            events = [r.choice(kept) for _ in range(r.randint(0, 3))] + kept
        group = r.choice([1, 300, 700, 3000, json_pieces.GROUP_CHARS])
        monkeypatch.setattr(jsonl, "GROUP_CHARS", group)
        assert list(jsonl_lines(record, events)) == _line_by_line(record, events), (case, group)
