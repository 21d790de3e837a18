"""The one wording module: every view spells statuses, endings and forced markers from here."""

from __future__ import annotations

from inspector.core.records import Forced
from inspector.reports.labels import forced_label, forced_markers, outcome, why_ended, words


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
