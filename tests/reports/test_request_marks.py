"""request_marks: each message of a step's request badged from what the record says the loop
did (feedback, kept failed answers, synthetic tool pairs, the final-step instruction) and
whether it is new since the previous call."""

from __future__ import annotations

from inspector.core.messages import Message, user
from inspector.core.records import RunRecord
from inspector.reports.request_marks import (
    Badge,
    previous_attempt_step,
    request_marks,
)
from tests.helpers.runs import demo_record


def texts(record: RunRecord, index: int) -> dict[int, list[str]]:
    marks = request_marks(record.steps, index, record.policy)
    return {p: [b.text for b in badges] for p, badges in sorted(marks.badges.items())}


async def test_retry_feedback_badges_feedback_and_kept_answers_with_their_attempt() -> None:
    record = await demo_record("retry-feedback")
    last = record.steps[-1]
    messages = last.request.messages
    assert texts(record, last.index) == {
        3: ["KEPT · attempt 1 (failed)"],
        4: ["FEEDBACK after attempt 1 · user"],
        5: ["NEW", "KEPT · attempt 2 (failed)"],
        6: ["NEW", "FEEDBACK after attempt 2 · user"],
    }
    assert messages[4] == record.steps[1].feedback[0]  # what step 2 says was injected
    assert messages[6] == record.steps[2].feedback[0]
    marks = request_marks(record.steps, last.index, record.policy)
    assert (marks.new_from, marks.previous, marks.new_count(len(messages))) == (5, 3, 2)


async def test_the_first_call_has_nothing_new_to_mark() -> None:
    record = await demo_record("retry-feedback")
    marks = request_marks(record.steps, 1, record.policy)
    assert marks.new_from is None and marks.previous is None and not marks.badges


async def test_a_feedback_text_equal_to_a_user_message_is_not_a_guess() -> None:
    """Same text as the feedback, but not at the place the loop put it: no badge."""
    record = await demo_record(
        "retry-feedback", 'prompt.user="Plain text only: no markdown characters."'
    )
    badges = texts(record, 3)
    assert 0 not in badges
    assert badges[4] == ["NEW", "FEEDBACK after attempt 1 · user"]


async def test_tool_role_feedback_is_a_synthetic_pair() -> None:
    record = await demo_record("retry-feedback", 'policy.feedback_role="tool"')
    badges = texts(record, record.steps[-1].index)
    assert badges[5] == ["NEW", "KEPT · attempt 2 (failed)", "SYNTHETIC · feedback call"]
    assert badges[6] == ["NEW", "FEEDBACK after attempt 2 · tool", "SYNTHETIC · result"]


async def test_without_kept_answers_the_feedback_call_is_injected_too() -> None:
    record = await demo_record(
        "retry-feedback", 'policy.feedback_role="tool"', "policy.keep_failed_attempts=false"
    )
    badges = texts(record, record.steps[-1].index)
    assert badges[3] == ["FEEDBACK after attempt 1 · assistant", "SYNTHETIC · feedback call"]
    assert not any("KEPT" in b for marks in badges.values() for b in marks)


async def test_a_kept_final_answer_call_and_its_result_are_synthetic() -> None:
    record = await demo_record("invalid-output-fallback")  # feedback_history = latest
    assert texts(record, 3) == {
        1: ["NEW", "KEPT · attempt 2 (failed)", "SYNTHETIC · final-answer call"],
        2: ["NEW", "SYNTHETIC · result"],
        3: ["NEW", "FEEDBACK after attempt 2 · user"],
    }


async def test_latest_drops_the_older_attempt_and_only_the_newest_is_marked() -> None:
    record = await demo_record("retry-feedback", "policy.feedback_history=latest")
    badges = texts(record, 4)
    assert [b for marks in badges.values() for b in marks if "attempt 1" in b] == []
    assert badges[3] == ["NEW", "KEPT · attempt 2 (failed)"]


async def test_an_empty_reply_is_never_a_kept_answer() -> None:
    record = await demo_record("empty-final")
    assert texts(record, 3) == {3: ["NEW", "FEEDBACK after attempt 1 · user"]}


async def test_the_final_step_instruction_is_split_off_the_system_prompt() -> None:
    record = await demo_record("step-cap")
    marks = request_marks(record.steps, 4, record.policy)
    assert marks.instruction == record.policy.final_step_instruction
    assert marks.system == record.steps[0].request.system
    assert request_marks(record.steps, 3, record.policy).instruction == ""
    # Without the policy, what the prompt adds to the previous call's prompt.
    assert request_marks(record.steps, 4).instruction == record.policy.final_step_instruction


async def test_the_previous_attempt_is_the_step_that_ended_it() -> None:
    record = await demo_record("retry-feedback")
    steps = record.steps
    assert previous_attempt_step(steps, 4) == steps[2]
    assert previous_attempt_step(steps, 3) == steps[1]
    assert previous_attempt_step(steps, 2) is None


async def test_an_edited_position_loses_its_badge() -> None:
    """A later request holding another message where the feedback was: no feedback badge."""
    record = await demo_record("retry-feedback")
    last = record.steps[-1]
    edited = list(last.request.messages)
    edited[4] = user("something else")
    request = last.request.model_copy(update={"messages": edited})
    steps = [*record.steps[:-1], last.model_copy(update={"request": request})]
    badges = request_marks(steps, last.index, record.policy).badges
    assert 4 in badges  # new: the previous call had the feedback there
    assert Badge("feedback", "FEEDBACK after attempt 1 · user") not in badges[4]
    assert isinstance(edited[4], Message)
