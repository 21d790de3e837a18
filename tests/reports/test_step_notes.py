"""The lines under a step (reports/step_notes.py), as the terminal timeline prints them."""

from __future__ import annotations

from inspector.core.live import LiveStep
from inspector.core.messages import Message
from inspector.core.records import Forced, SourceLocation, StepRequest, Verdict
from inspector.core.revalidate import Flip
from inspector.reports.step_notes import StepNotes, note_count, step_notes
from tests.helpers.demo_events import stored_run


def _step(**fields: object) -> LiveStep:
    return LiveStep(index=1, attempt=1, request=StepRequest(system="", messages=[]), **fields)  # type: ignore[arg-type]


def test_a_failed_step_has_its_reasons_then_its_feedback_in_full() -> None:
    step = stored_run("retry-feedback").steps[1]
    assert [(n.kind, n.text) for n in step_notes(step)] == [
        ("fail", "✗ no_markdown: found '*' at 0"),
        ("feedback", "↳ feedback (user): Plain text only: no markdown characters."),
    ]


def test_forced_requests_and_validator_errors_are_worded_as_such() -> None:
    step = _step(
        forced=Forced(tool_choice="none", instruction_appended=True),
        verdicts=[
            Verdict.passed("max_length"),
            Verdict.errored(
                "no_cjk",
                "ZeroDivisionError: division by zero",
                SourceLocation(file="checks.py", line=7),
            ),
        ],
    )
    notes = step_notes(step)
    assert [n.kind for n in notes] == ["forced", "forced", "error"]
    assert [n.text for n in notes[:2]] == [
        "⚑ forced: tools disabled on this step (tool_choice: none)",
        "⚑ forced: the final-step instruction was appended to the system prompt",
    ]
    assert notes[2].text == (
        "! validator error in no_cjk (checks.py:7): ZeroDivisionError: division by zero"
        " — the validator broke, not the model's failure"
    )


def test_flips_new_and_dropped_verdicts() -> None:
    flips = [
        Flip(step=1, validator="max_length", before="pass", after="fail"),
        Flip(step=1, validator="no_cjk", before=None, after="fail"),
        Flip(step=1, validator="old", before="pass", after=None),
    ]
    assert [n.text for n in step_notes(_step(), flips)] == [
        "⇄ max_length: pass → fail",
        "+ new verdict no_cjk: fail",
        "− dropped verdict old (was pass)",
    ]


def test_note_count_matches_the_notes_on_every_demo_step() -> None:
    flips = [Flip(step=1, validator="x", before="pass", after="fail")]
    for demo in ("retry-feedback", "step-cap", "final-answer-tool", "empty-final"):
        for live in stored_run(demo).steps:
            assert note_count(live) == len(step_notes(live))
            assert note_count(live, flips) == len(step_notes(live, flips))


def test_feedback_is_one_line_and_kept_notes_follow_the_step() -> None:
    step = _step(feedback=[Message(role="tool", content="line one\n\n  line two")])
    assert step_notes(step)[0].text == "↳ feedback (tool): line one line two"
    kept = StepNotes()
    first = kept.of(step, (), 1)
    assert first is not None and kept.of(step, (), 1) is first  # kept
    step.verdicts = [Verdict.failed("max_length", "171 characters > 160")]
    assert kept.of(step, (), 1) == step_notes(step)[0]  # the step changed: built again
    assert kept.of(step, (), 5) is None
