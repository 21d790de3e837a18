"""request_diff: one request against another of the same run, past their shared opening."""

from __future__ import annotations

from inspector.core.messages import assistant, tool_result, user
from inspector.core.records import StepRequest
from inspector.core.shared_list import SharedPrefix
from inspector.reports.compare_lines import DiffLine
from inspector.reports.request_diff import request_diff
from tests.helpers.runs import demo_record


def kinds(diff_lines: list[DiffLine], kind: str) -> list[str]:
    return [line.text for line in diff_lines if line.kind == kind]


async def test_a_retry_adds_the_kept_answer_and_the_feedback() -> None:
    record = await demo_record("retry-feedback")
    before, after = record.steps[2].request, record.steps[3].request
    diff = request_diff(before, after)
    assert diff.skipped == len(before.messages) == 5
    assert kinds(diff.lines, "added") == [
        "MESSAGES (7)",
        "— assistant",
        "  " + record.steps[2].response.text,  # type: ignore[union-attr]
        "— user",
        "  An SMS holds 160 characters at most. Shorten it.",
    ]
    assert kinds(diff.lines, "removed") == ["MESSAGES (5)"]
    assert "  … the first 5 messages not shown" in kinds(diff.lines, "same")
    assert diff.summary == "5 lines added, 1 removed"


async def test_the_forced_final_step_shows_the_instruction_and_tool_choice() -> None:
    record = await demo_record("step-cap")
    diff = request_diff(record.steps[2].request, record.steps[3].request)
    assert "  " + record.policy.final_step_instruction in kinds(diff.lines, "added")
    assert "TOOL_CHOICE none" in kinds(diff.lines, "added")
    assert "TOOL_CHOICE auto" in kinds(diff.lines, "removed")


def test_a_long_turn_diffs_only_past_the_shared_opening() -> None:
    history = [user("go")]
    for n in range(10_000):
        call = f"c{n}"
        history += [assistant(None, ()), tool_result(call, f"result {n}", "lookup")]
    before = StepRequest.model_construct(
        system="s", messages=SharedPrefix(history, len(history) - 2)
    )
    after = StepRequest.model_construct(system="s", messages=SharedPrefix(history, len(history)))
    diff = request_diff(before, after)
    assert diff.skipped == len(history) - 2
    assert kinds(diff.lines, "added")[-1] == "  result 9999"  # the end is never cut off
    assert len(diff.lines) < 20


def test_the_same_request_says_so() -> None:
    request = StepRequest(system="s", messages=[user("hi")])
    diff = request_diff(request, request)
    assert (diff.added, diff.removed, diff.summary) == (0, 0, "the same request")
