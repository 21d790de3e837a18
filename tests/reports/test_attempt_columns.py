"""The Attempts tab's content without Qt: columns per attempt, verdict order and wording, the
kept answer, and paging."""

from __future__ import annotations

import pytest

from inspector.core.records import RunError, Verdict
from inspector.reports.attempt_columns import (
    ERROR_NOTE,
    attempt_column,
    attempt_columns,
    kept_column,
    page_label,
    page_start,
    verdict_lines,
)
from inspector.reports.labels import value_text
from tests.helpers.demo_events import demo_run


def test_one_column_per_attempt_with_candidate_verdicts_and_feedback() -> None:
    record = demo_run("retry-feedback")[1]
    columns = attempt_columns(record.steps)
    assert [c.number for c in columns] == [1, 2, 3]
    first, second, third = columns
    assert first.tool_count == 1 and "lookup_contact" in first.tool_lines[0]
    assert first.cleared and not third.cleared
    assert second.step == 3 and second.candidate.kind == "text"
    assert second.candidate.text == record.steps[2].response.text  # type: ignore[union-attr]
    assert (
        second.verdicts[0].said == "failed" and "171 characters > 160" in second.verdicts[0].reason
    )
    assert [(f.role, f.text) for f in second.feedback] == [
        ("user", "An SMS holds 160 characters at most. Shorten it.")
    ]
    assert third.feedback == () and {v.said for v in third.verdicts} == {"passed"}


def test_failed_verdicts_come_first_and_an_error_is_the_validators() -> None:
    verdicts = [
        Verdict(validator="short", ok=True, status="pass"),
        Verdict(validator="no_cjk", ok=False, status="error", reason="ZeroDivisionError: x"),
        Verdict(validator="plain", ok=False, status="fail", reason="found '*'"),
    ]
    lines = verdict_lines(verdicts)
    assert [line.validator for line in lines] == ["plain", "no_cjk", "short"]
    error = lines[1]
    assert error.said == "validator error" and error.chip == "! no_cjk"
    assert error.note == ERROR_NOTE and "not the model's failure" in error.note
    assert "fail" not in error.said
    assert lines[0].note == "" and lines[0].said == "failed"


def test_a_structured_candidate_and_the_fallback_kept() -> None:
    record = demo_run("invalid-output-fallback")[1]
    columns = attempt_columns(record.steps)
    assert len(columns) == 3
    assert columns[0].candidate.kind == "structured"
    assert columns[0].candidate.detail == "final_answer"
    kept = kept_column(record)
    assert kept.kind == "fallback" and kept.value == record.output
    assert kept.outcome == "fallback (after validator exhausted)"
    assert "not the model's answer" in kept.note
    assert "Meeting moved to 3pm." in value_text(kept.value)


def test_the_kept_answer_of_a_success_an_error_and_a_run_in_progress() -> None:
    record = demo_run("retry-feedback")[1]
    assert kept_column(record).kind == "output" and kept_column(record).value == record.output
    broken = record.model_copy(
        update={
            "status": "error",
            "termination": "provider_error",
            "output": None,
            "error": RunError(type="ProviderError", message="HTTP 500"),
        }
    )
    kept = kept_column(broken)
    assert kept.kind == "error" and kept.error == "ProviderError: HTTP 500"
    assert kept_column(None).kind == "running"


def test_a_streaming_candidate_shows_its_tail() -> None:
    step = demo_run("retry-feedback")[1].steps[-1]
    response = step.response.model_copy(update={"text": "x" * 5_000 + "END"})  # type: ignore[union-attr]
    pending = step.model_copy(update={"status": "pending", "response": response, "verdicts": []})
    column = attempt_column(pending)
    assert column.waiting and column.candidate.text.endswith("END")
    assert "characters so far above" in column.candidate.text


@pytest.mark.parametrize(
    ("first", "shown", "total", "said"),
    [
        (3, 3, 12, "attempts 4–6 of 12"),
        (10, 3, 12, "attempts 11–12 of 12"),
        (1, 1, 2, "attempt 2 of 2"),
        (0, 3, 0, "no attempts yet"),
        (9_997, 3, 10_000, "attempts 9,998–10,000 of 10,000"),
    ],
)
def test_page_label(first: int, shown: int, total: int, said: str) -> None:
    assert page_label(first, shown, total) == said


def test_page_start_keeps_the_selection_in_view_and_the_page_full() -> None:
    assert page_start(0, 3, 12, None) == 0
    assert page_start(0, 3, 12, 7) == 5  # moved just enough to show attempt 8
    assert page_start(5, 3, 12, 2) == 2
    assert page_start(9, 3, 10, None) == 7  # a full page at the end
    assert page_start(4, 2, 12, 5) == 4  # narrower: still shows the selection
    assert page_start(0, 5, 2, 1) == 0
