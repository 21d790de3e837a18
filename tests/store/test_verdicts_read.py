"""A run's verdicts read back as stored (``reader.read_verdicts``: each row's JSON written by
SQLite and validated in batches; a row whose texts are stored apart built from its columns),
by the whole read, the light read and a step read alone."""

from __future__ import annotations

from inspector.core.records import SourceLocation, Verdict
from inspector.store import Store
from tests.store.synthetic import every_shape

LONG = "a reason past the store's large-text threshold. " * 40


def verdicts_of_every_kind() -> list[Verdict]:
    return [
        Verdict.failed("no_markdown", "found *", feedback="Plain text only."),
        Verdict.passed("max_length"),
        Verdict.passed("empty_reason_kept_empty"),
        Verdict.errored("python:check", "ZeroDivisionError", SourceLocation(file="c.py", line=3)),
        Verdict(validator="python:loud", ok=False, status="fail", reason="no", captured="hi\n"),
        Verdict.failed("long_reason", LONG, feedback="short feedback"),
        Verdict.failed("long_feedback", "short reason", feedback=LONG + "feedback"),
        Verdict.failed("quotes", 'says "no" \\ and ünïcode ✓\n', feedback=None),
    ]


def test_verdicts_of_every_kind_read_back_as_saved(store: Store) -> None:
    record = every_shape()
    record.steps[0].verdicts = verdicts_of_every_kind()
    record.steps[1].verdicts = list(reversed(verdicts_of_every_kind()))
    store.save(record)
    full = store.load(record.run_id)
    light = store.load_light(record.run_id, 1)
    assert light is not None
    for n, saved in enumerate(record.steps):
        assert full.steps[n].verdicts == saved.verdicts
        assert light.steps[n].verdicts == saved.verdicts
        assert store.load_step(record.run_id, n + 1).verdicts == saved.verdicts
        for mine, theirs in zip(full.steps[n].verdicts, saved.verdicts, strict=True):
            assert mine.model_fields_set == theirs.model_fields_set | {
                "validator",
                "ok",
                "status",
                "reason",
                "feedback",
                "location",
                "captured",
            }
