"""Comparing runs of one turn: policy and scenario differences, steps aligned by index, the first
divergence, the outcome — and its terminal table. Real runs of the demos under other policies."""

from __future__ import annotations

import json

import pytest

from inspector.core.messages import Message
from inspector.core.records import RunRecord, Step
from inspector.reports.compare import (
    FieldDiff,
    canonical_request,
    compare_runs,
    field_diffs,
    first_divergence,
    flatten,
    request_keys,
)
from inspector.reports.compare_text import render_comparison
from tests.helpers.runs import demo_record
from tests.store.synthetic import long_turn


async def test_feedback_history_latest_diverges_where_the_second_feedback_would_be() -> None:
    accumulate = await demo_record("retry-feedback")
    latest = await demo_record("retry-feedback", "policy.feedback_history=latest")
    comparison = compare_runs([accumulate, latest])

    assert comparison.policy_diffs == [
        FieldDiff(field="feedback_history", values=["accumulate", "latest"])
    ]
    assert comparison.scenario_diffs == []
    # Steps 1–3 saw the same requests; at step 4 "latest" dropped the first failed attempt.
    assert [row.same_request for row in comparison.steps] == [True, True, True, False]
    divergence = comparison.divergence
    assert divergence is not None
    assert (divergence.index, divergence.aspect) == (4, "request")
    assert divergence.field.startswith("messages[")
    position = int(divergence.field.removeprefix("messages[").rstrip("]"))
    requests = [r.steps[3].request.messages for r in (accumulate, latest)]
    assert requests[0][:position] == requests[1][:position]
    assert divergence.values[0] == requests[0][position].model_dump(mode="json")
    assert first_divergence([accumulate, latest]) == divergence
    # Both end well; the latest-only history costs fewer input tokens on the last call.
    assert [o.status for o in comparison.outcomes] == ["succeeded", "succeeded"]
    first, second = comparison.outcomes
    assert first.input_tokens == accumulate.usage.input_tokens
    assert second.input_tokens == latest.usage.input_tokens
    assert second.input_tokens < first.input_tokens
    assert first.total_tokens == first.input_tokens + first.output_tokens


async def test_a_smaller_step_cap_forces_step_3_and_ends_there() -> None:
    full = await demo_record("retry-feedback")
    capped = await demo_record("retry-feedback", "policy.max_steps=3")
    comparison = compare_runs([full, capped])

    assert comparison.policy_diffs == [FieldDiff(field="max_steps", values=[8, 3])]
    divergence = comparison.divergence
    assert divergence is not None
    # The forced last step appends the final-step instruction to the system prompt (B2).
    assert (divergence.index, divergence.aspect, divergence.field) == (3, "request", "system")
    assert divergence.values[1].startswith(divergence.values[0])
    step3 = comparison.steps[2].cells
    assert step3[0] is not None and step3[0].forced is None
    assert step3[1] is not None and step3[1].forced is not None
    assert step3[1].forced.tool_choice == "none"
    last = comparison.steps[3]
    assert last.cells[0] is not None and last.cells[1] is None
    assert [o.termination for o in comparison.outcomes] == ["stop", "step_cap"]
    assert [o.steps_used for o in comparison.outcomes] == [4, 3]


async def test_a_validator_change_is_a_scenario_difference_and_flips_a_verdict() -> None:
    strict = await demo_record("retry-feedback")
    lenient = await demo_record("retry-feedback", "validators.1.max=200")
    comparison = compare_runs([strict, lenient])

    assert comparison.policy_diffs == []
    assert FieldDiff(field="validators.1.max", values=[160, 200]) in comparison.scenario_diffs
    row3 = comparison.steps[2]
    assert row3.same_request and row3.same_response
    cells = row3.cells
    assert cells[0] is not None and cells[1] is not None
    before, after = cells[0].verdict("max_length"), cells[1].verdict("max_length")
    assert before is not None and after is not None
    assert (before.status, after.status) == ("fail", "pass")
    assert "171" in before.reason
    assert (cells[0].cleared, cells[1].cleared) == (True, False)
    # The lenient run accepted step 3: only the strict one has a step 4.
    divergence = comparison.divergence
    assert divergence is not None
    assert (divergence.index, divergence.aspect) == (4, "steps")
    assert divergence.values == ["success", None]


async def test_a_different_answer_is_a_response_divergence() -> None:
    scripted = await demo_record("retry-feedback")
    other = await demo_record("retry-feedback", 'script.1.text="Hi Sam, meeting at 3pm."')
    divergence = compare_runs([scripted, other]).divergence
    assert divergence is not None
    assert (divergence.index, divergence.aspect, divergence.field) == (2, "response", "text")
    assert divergence.values[1] == "Hi Sam, meeting at 3pm."
    assert [d.field for d in compare_runs([scripted, other]).scenario_diffs] == ["script.1.text"]


async def test_identical_runs_do_not_diverge_even_with_new_tool_call_ids() -> None:
    record = await demo_record("retry-feedback")
    # A live provider names its tool calls anew on every call: that is not a difference.
    renamed = RunRecord.model_validate(
        json.loads(record.model_dump_json().replace("call_1_0", "toolu_01XYZ"))
    )
    comparison = compare_runs([record, renamed, record])
    assert comparison.divergence is None
    assert comparison.policy_diffs == [] and comparison.scenario_diffs == []
    assert all(row.same_request and row.same_response for row in comparison.steps)
    assert canonical_request(renamed.steps[1].request) == canonical_request(record.steps[1].request)
    assert renamed.steps[1].request != record.steps[1].request


def test_flatten_addresses_leaves_like_set_does() -> None:
    tree = {"a": {"b": 1, "c": [10, {"d": 2}]}, "e": [], "f": {}}
    assert flatten(tree) == {"a.b": 1, "a.c.0": 10, "a.c.1.d": 2, "e": [], "f": {}}


def test_field_diffs_keeps_only_what_differs_and_marks_missing_fields() -> None:
    diffs = field_diffs([{"x": 1, "y": 2}, {"x": 1, "y": 3, "z": None}])
    assert diffs == [FieldDiff(field="y", values=[2, 3]), FieldDiff(field="z", values=[None, None])]


async def test_one_run_is_not_a_comparison() -> None:
    with pytest.raises(ValueError, match="two or more"):
        compare_runs([await demo_record("empty-final")])


# ---- the terminal table ------------------------------------------------------------------------


async def test_the_table_lists_policy_first_and_marks_the_divergence_step() -> None:
    accumulate = await demo_record("retry-feedback")
    latest = await demo_record("retry-feedback", "policy.feedback_history=latest")
    text = render_comparison(compare_runs([accumulate, latest]))
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines)
    policy_at = lines.index("policy (only what differs)")
    assert lines[policy_at + 1].split() == ["≠", "feedback_history", "accumulate", "latest"]
    assert lines.index("steps") > policy_at
    marked = [line for line in lines if line.startswith("▶")]
    assert len(marked) == 1 and marked[0].split()[1:3] == ["step", "4"]
    assert any("first divergence: the requests differ at messages[" in line for line in lines)
    # Per step: attempt and status, each validator's verdict with its reason, the cleared mark.
    assert any(line.split()[:4] == ["step", "2", "a1", "failed_validation"] for line in lines)
    assert any(line.split()[:3] == ["no_markdown", "fail:", "found"] for line in lines)
    assert any(line.split() == ["marks", "cleared", "cleared"] for line in lines)
    outcome = lines[lines.index("outcome") :]
    assert any(line.split() == ["status", "succeeded", "succeeded"] for line in outcome)
    totals = next(line for line in outcome if "total tokens" in line).split()
    assert totals[0] == "≠"
    assert totals[-2:] == [
        str(r.usage.input_tokens + r.usage.output_tokens) for r in (accumulate, latest)
    ]


@pytest.mark.parametrize("runs", [2, 3, 4])
async def test_the_table_fits_100_columns_for_up_to_four_runs(runs: int) -> None:
    variants = [
        (),
        ("policy.feedback_history=latest",),
        ("policy.max_steps=3",),
        ("policy.max_attempts=2", "policy.feedback_role=system"),
    ]
    records = [await demo_record("retry-feedback", *v) for v in variants[:runs]]
    lines = render_comparison(compare_runs(records)).splitlines()
    assert max(len(line) for line in lines) <= 100
    run_row = next(line for line in lines if line.split()[:1] == ["run"])
    assert run_row.split()[1:] == [r.run_id for r in records]
    # Columns line up: each run id starts where its status cells start.
    status_row = next(line for line in lines if line[2:].split()[:1] == ["status"])
    for record in records:
        assert run_row.index(record.run_id) == status_row.index(
            record.status, run_row.index(record.run_id)
        )


async def test_identical_runs_say_so() -> None:
    record = await demo_record("step-cap")
    text = render_comparison(compare_runs([record, record]))
    assert "no divergence" in text
    assert "policy: same" in text and "scenario: same" in text
    assert not any(line.startswith(("▶", "≠")) for line in text.splitlines()[:-3])


async def test_request_keys_are_equal_exactly_when_canonical_requests_are() -> None:
    # Issue 18 item 9: steps are compared by keys built in one pass over each run.
    records = [
        await demo_record("retry-feedback"),
        await demo_record("retry-feedback", "policy.feedback_history=latest"),
        await demo_record("retry-feedback", "policy.keep_failed_attempts=false"),
        await demo_record("step-cap"),
        long_turn(6),
        long_turn(6).model_copy(update={"steps": _renamed_ids(long_turn(6).steps)}),
    ]
    steps = [(r, s) for r in records for s in r.steps]
    keys = {(r.run_id, id(r)): request_keys(r) for r in records}
    for ra, a in steps:
        for rb, b in steps:
            same_key = keys[ra.run_id, id(ra)][a.index] == keys[rb.run_id, id(rb)][b.index]
            same = canonical_request(a.request) == canonical_request(b.request)
            assert same_key == same, (ra.scenario, a.index, rb.scenario, b.index)


def _renamed_ids(steps: list[Step]) -> list[Step]:
    """The same turn as a live provider would record it again: other tool-call ids."""

    def rename(message: Message) -> Message:
        calls = tuple(c.model_copy(update={"id": "x" + c.id}) for c in message.tool_calls or ())
        return message.model_copy(
            update={
                "tool_calls": calls or message.tool_calls,
                "tool_call_id": "x" + message.tool_call_id if message.tool_call_id else None,
            }
        )

    return [
        s.model_copy(
            update={
                "request": s.request.model_copy(
                    update={"messages": [rename(m) for m in s.request.messages]}
                )
            }
        )
        for s in steps
    ]
