"""The one wording module: every view spells statuses, endings and forced markers from here."""

from __future__ import annotations

from inspector.core.messages import ToolCall
from inspector.core.records import Forced, Step, StepRequest, StepResponse
from inspector.reports.labels import (
    forced_label,
    forced_markers,
    missing_text,
    outcome,
    step_budget,
    step_cap,
    step_note,
    why_ended,
    words,
)


def test_words_turn_record_tokens_into_prose() -> None:
    assert words("failed_validation") == "failed validation"
    assert words(None) == ""


def test_why_ended_names_the_fallback_trigger_first() -> None:
    assert why_ended("step_cap") == "step_cap"
    assert why_ended("fallback", "max_attempts") == "max_attempts → fallback"
    assert why_ended(None) == ""


def test_outcome_adds_the_termination_only_when_known() -> None:
    assert outcome("failed", "step_cap") == "failed (step cap)"
    assert outcome("succeeded", None) == "succeeded"


def test_forced_label_is_spelled_from_the_timeline_markers() -> None:
    both = Forced(tool_choice="none", instruction_appended=True)
    assert forced_label(both) == "forced: tools off +instruction"
    assert forced_label(Forced(tool_choice="required")) == "forced: tool required"
    pinned = Forced(tool_choice={"type": "function", "name": "final_answer"})
    assert forced_label(pinned) == "forced: final_answer pinned"
    assert [label for label, _ in forced_markers(pinned)] == ["final_answer pinned"]
    assert forced_label(None) == ""


def test_outcome_never_repeats_itself() -> None:
    assert outcome("cancelled", "cancelled") == "cancelled"
    assert outcome("succeeded", "stop") == "succeeded"
    assert outcome("succeeded", "validator_stop") == "succeeded (validator stop)"
    assert outcome("error", "validator_error") == "error (validator error)"


def test_a_fallback_outcome_names_what_it_replaced() -> None:
    assert outcome("fallback", "fallback", "validator_exhausted") == (
        "fallback (after validator exhausted)"
    )
    assert outcome("fallback", "fallback") == "fallback"


def test_an_empty_text_box_says_nothing_yet_only_while_streaming() -> None:
    request = StepRequest(system="", messages=[])
    call = ToolCall(id="c1", name="lookup", arguments={})
    pending = Step(index=1, attempt=1, status="pending", request=request)
    assert missing_text(pending) == "Text: nothing yet"
    work = pending.model_copy(
        update={"status": "success", "response": StepResponse(text="", tool_calls=[call])}
    )
    assert missing_text(work) == "Text: none — the model answered with tool calls only"
    empty = pending.model_copy(update={"status": "empty", "response": StepResponse(text="")})
    assert missing_text(empty) == "Text: none"


def test_a_validator_error_step_says_the_model_did_not_fail() -> None:
    step = Step(
        index=1, attempt=1, status="validator_error", request=StepRequest(system="", messages=[])
    )
    assert "not the model's failure" in step_note(step)
    assert step_note(step.model_copy(update={"status": "failed_validation"})) == ""


def test_the_step_cap_is_stated_beside_the_steps_taken() -> None:
    assert step_budget(4, 8) == "4 steps of 8 max"
    assert step_budget(1, 20) == "1 step of 20 max"
    assert step_budget(3, None) == "3 steps"
    assert step_cap(8) == "8 steps max"
    assert step_cap(1) == "1 step max"
    assert step_cap(None) == ""


def test_a_pinned_markers_short_form_drops_the_tool() -> None:
    from inspector.reports.labels import short_marker

    assert short_marker("final_answer pinned") == "pinned"
    assert short_marker("tools off") is None and short_marker("+instruction") is None
