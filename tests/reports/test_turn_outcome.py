"""The outcome header's words (reports/turn_outcome.py), without Qt: what the user got, how
the turn ended, the budgets, tokens and cost, for finished and streaming runs."""

from __future__ import annotations

from inspector.core.live import LiveRun
from inspector.core.records import RunError, Usage
from inspector.reports.labels import ending
from inspector.reports.run_text import run_title
from inspector.reports.turn_outcome import EMPTY, NOT_PRICED, cost_words, turn_outcome
from tests.helpers.demo_events import demo_run, stored_run


def test_an_accepted_answer_after_rejected_attempts() -> None:
    outcome = turn_outcome(stored_run("retry-feedback"), cost=None)
    record = demo_run("retry-feedback")[1]
    assert (outcome.status, outcome.answer_kind, outcome.answer_label) == (
        "succeeded",
        "output",
        "Answer",
    )
    assert outcome.answer == record.output
    assert outcome.ended == (
        "The model's answer was accepted on attempt 3, after 2 rejected attempts."
    )
    assert outcome.facts == (
        "attempt 3 of 3",
        "4 steps of 8 max",
        f"{record.usage.input_tokens} in / {record.usage.output_tokens} out tokens",
        "cost unknown",
    )


def test_a_fallback_run_shows_the_fallback_value_not_the_models_answer() -> None:
    outcome = turn_outcome(stored_run("invalid-output-fallback"), cost=0.000412)
    assert outcome.answer_kind == "fallback" and outcome.answer_label == "Fallback value"
    assert '"body": "Meeting moved to 3pm."' in outcome.answer
    assert outcome.ended.startswith("No valid answer (every attempt failed validation)")
    assert "fallback value was used instead of the model's" in outcome.ended
    assert outcome.facts[-1] == "$0.000412"


def test_a_failed_run_shows_its_error_and_why_in_words() -> None:
    run = stored_run("retry-feedback")
    assert run.record is not None
    error = RunError(type="ValidatorExhausted", message="no_markdown: found '*' at 0")
    run.record = run.record.model_copy(
        update={
            "status": "failed",
            "termination": "validator_exhausted",
            "output": None,
            "error": error,
        }
    )
    outcome = turn_outcome(run)
    assert outcome.answer_kind == "error" and outcome.answer_label == "Error"
    assert outcome.answer == "ValidatorExhausted: no_markdown: found '*' at 0"
    assert outcome.ended == "Every attempt failed validation: no answer was accepted."
    assert outcome.facts[-1] == "cost …"  # not looked up yet: never $0


def test_an_answer_forced_by_the_step_cap_says_so() -> None:
    outcome = turn_outcome(stored_run("step-cap"))
    assert outcome.ended == (
        "The model's answer was accepted — on the last step the step cap allows (4 of 4),"
        " forced to answer without tools."
    )


def test_a_structured_answer_is_indented_json() -> None:
    outcome = turn_outcome(stored_run("final-answer-tool"))
    assert outcome.answer.startswith('{\n  "to": "Sam",')  # in full: what Copy copies
    assert outcome.answer_brief == '{"to": "Sam", "body": "Hi Sam, the meeting moved to 3pm."}'


def test_a_streaming_run_counts_against_its_budgets_so_far() -> None:
    events, _ = demo_run("retry-feedback")
    run = LiveRun()
    assert turn_outcome(run) is EMPTY
    started = [i for i, e in enumerate(events) if e.kind == "step_started"]
    for event in events[: started[2] + 1]:  # into the third step (attempt 2)
        run.apply(event)
    outcome = turn_outcome(run, Usage(input_tokens=1200, output_tokens=34))
    assert outcome.status == "running" and outcome.answer == ""
    assert outcome.ended == "Running: step 3 of attempt 2."
    assert outcome.facts == (
        "attempt 2 of 3",
        "3 steps of 8 max",
        "1,200 in / 34 out tokens so far",
    )


def test_endings_name_the_cause_and_never_blame_the_model_for_a_broken_validator() -> None:
    assert "validator error, not the model's failure" in ending("error", "validator_error")
    assert ending("failed", "step_cap").startswith("The step cap was reached")
    assert ending("succeeded", "empty_final") == (
        "The model's final reply was empty, and accepted as it is."
    )
    assert ending("error", "validator_exhausted").endswith("Then the turn broke on an error.")
    assert ending("interrupted", None).startswith("Interrupted")
    assert ending("cancelled", "cancelled") == "Cancelled before the turn ended."


def test_cost_words() -> None:
    assert cost_words(None) == "cost unknown"
    assert cost_words(NOT_PRICED) == "cost …"
    assert cost_words(0.5) == "$0.5000"
    assert cost_words(0.000123) == "$0.000123"


def test_a_proxied_run_has_no_budgets_to_count_against() -> None:
    run = stored_run("retry-feedback")
    assert run.record is not None
    run.record = run.record.model_copy(update={"via": "proxy"})
    assert turn_outcome(run).facts[:2] == ("attempt 3", "4 steps")


def test_a_proxied_run_streaming_has_no_budgets_either() -> None:
    events, _ = demo_run("retry-feedback")
    started = [i for i, e in enumerate(events) if e.kind == "step_started"]
    proxied = LiveRun()
    for event in events[: started[2] + 1]:
        proxied.apply(event)
    assert proxied.header is not None
    assert "8 steps max" in run_title(proxied)  # before: a policy run's cap is said
    proxied.header = proxied.header.model_copy(update={"via": "proxy"})
    assert turn_outcome(proxied).facts == ("attempt 2", "3 steps")
    assert "steps max" not in run_title(proxied)
