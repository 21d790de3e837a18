"""request_marks: each message of a step's request badged from what the record says the loop
did (feedback, kept failed answers, synthetic tool pairs, the final-step instruction) and
whether it is new since the previous call."""

from __future__ import annotations

import pytest

from inspector.core.messages import Message, user
from inspector.core.records import RunRecord, Step
from inspector.reports.request_marks import (
    Badge,
    FailureIndex,
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


def blind_retry(attempts: int, record: RunRecord) -> list[Step]:
    """``attempts`` one-step attempts each sending the first request again (no feedback, no
    kept answer in it: a blind retry), the last one successful."""
    first = record.steps[0]
    failed = first.model_copy(update={"status": "failed_validation", "feedback": []})
    steps = [failed.model_copy(update={"index": n, "attempt": n}) for n in range(1, attempts)]
    return [*steps, first.model_copy(update={"index": attempts, "attempt": attempts})]


@pytest.mark.parametrize("attempts", [10, 2_000])
async def test_the_last_steps_marks_walk_no_attempt_of_a_blind_retry(attempts: int) -> None:
    """Marks of the last step after 10 or 2,000 attempts: the index looked at each attempt
    once, and the marks walk none of them (nothing of theirs is in the request)."""
    steps = blind_retry(attempts, await demo_record("retry-feedback"))
    failures = FailureIndex()
    marks = request_marks(steps, attempts, None, failures)
    assert failures.visited == attempts - 1
    assert failures.before(attempts) == []
    assert marks == request_marks(steps, attempts)  # the same as without a kept index
    assert marks.new_from == len(steps[-1].request.messages) and not marks.badges
    request_marks(steps, attempts, None, failures)  # again: no attempt looked at again
    assert failures.visited == attempts - 1


async def test_an_index_kept_across_steps_gives_the_marks_of_a_fresh_one() -> None:
    records = [
        await demo_record("retry-feedback"),
        await demo_record("retry-feedback", 'policy.feedback_role="tool"'),
        await demo_record("retry-feedback", "policy.feedback_history=latest"),
        await demo_record("invalid-output-fallback"),
        await demo_record("empty-final"),
    ]
    for record in records:
        steps = record.steps
        forward, backward = FailureIndex(), FailureIndex()
        order = range(1, len(steps) + 1)
        for index in order:
            fresh = request_marks(steps, index, record.policy)
            assert request_marks(steps, index, record.policy, forward) == fresh
        for index in reversed(order):
            fresh = request_marks(steps, index, record.policy)
            assert request_marks(steps, index, record.policy, backward) == fresh
        attempts = len({s.attempt for s in steps})
        assert forward.visited == backward.visited == attempts - 1
        assert len(forward.before(steps[-1].attempt)) == attempts - 1  # each left something


async def test_a_pending_attempt_end_is_looked_at_once_final() -> None:
    """A live run: an attempt whose last step is not final yet (None in the finals) waits."""
    record = await demo_record("retry-feedback")
    steps = record.steps
    finals: list[Step | None] = [*steps[:1], None, *steps[2:]]  # step 2 ends attempt 1
    failures = FailureIndex()
    failures.update(finals, steps)
    assert failures.visited == 0 and failures.before(3) == []
    failures.update(steps)
    assert failures.visited == 2
    assert [left.failed.index for left in failures.before(3)] == [2, 3]


async def test_a_long_attempt_is_found_by_bisection_not_read_step_by_step() -> None:
    """The end of a 5,000-step attempt is found reading a handful of steps (a bisection)."""
    from collections.abc import Sequence

    record = await demo_record("retry-feedback")
    work = record.steps[0]
    steps = [work.model_copy(update={"index": n}) for n in range(1, 5_001)]
    steps.append(record.steps[2].model_copy(update={"index": 5_001, "attempt": 2}))

    class Counted(Sequence[Step]):
        reads = 0

        def __len__(self) -> int:
            return len(steps)

        def __getitem__(self, i: int) -> Step:  # type: ignore[override]
            Counted.reads += 1
            return steps[i]

    failures = FailureIndex()
    failures.update(Counted())
    assert failures.visited == 1 and Counted.reads < 40
