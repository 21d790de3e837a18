"""The shared import rules (formats.assemble, formats.fidelity), one by one, on small calls."""

from __future__ import annotations

from inspector.core.messages import Message, ToolCall
from inspector.core.records import RunRecord, StepResponse, ToolSpec
from inspector.formats.assemble import ImportedCall, RunSource, build_run, continues
from inspector.formats.openai_jsonl_import import group_turns

SOURCE = RunSource(format="otel", file="t.json", run_id="r1", scenario="s", started_at="")
U = Message(role="user", content="hi")


def _answer(text: str) -> StepResponse:
    return StepResponse(text=text, finish_reason="stop")


def _call(messages: list[Message], response: StepResponse | None, **kw: object) -> ImportedCall:
    return ImportedCall(system="sys", messages=messages, response=response, **kw)  # type: ignore[arg-type]


def test_continues_is_a_prefix_test() -> None:
    a = Message(role="assistant", content="x")
    assert continues([U], [U, a]) == 1
    assert continues([U, a], [U]) is None
    assert continues([a], [U, a]) is None


def test_an_answer_followed_by_a_continuation_is_a_failed_attempt() -> None:
    bad, good = _answer("**no**"), _answer("yes")
    feedback = Message(
        role="user", content="<pyai:retry_feedback>\nNo markdown.\n</pyai:retry_feedback>"
    )
    calls = [
        _call([U], bad),
        _call([U, Message(role="assistant", content="**no**"), feedback], good),
    ]
    record = build_run(SOURCE, calls)
    first, second = record.steps
    assert (first.status, first.attempt, second.attempt) == ("failed_validation", 1, 2)
    assert first.feedback == [feedback]
    assert first.verdicts[0].reason == "No markdown."  # Pydantic AI's fence is taken off
    assert record.output == "yes" and record.budgets.attempts_used == 2


def test_a_retry_with_the_failed_attempt_dropped_still_counts() -> None:
    feedback = Message(role="user", content="again")
    record = build_run(SOURCE, [_call([U], _answer("a")), _call([U, feedback], _answer("b"))])
    assert record.steps[0].status == "failed_validation"
    assert record.steps[0].feedback == [feedback]


def test_tool_results_come_from_the_next_request() -> None:
    call = ToolCall(id="c1", name="t", arguments={})
    asked = StepResponse(tool_calls=[call], finish_reason="tool_calls")
    result = Message(role="tool", content="42", tool_call_id="c1")
    assistant = Message(role="assistant", tool_calls=(call,))
    record = build_run(SOURCE, [_call([U], asked), _call([U, assistant, result], _answer("42"))])
    assert record.steps[0].tool_results[0].content == "42"
    assert record.steps[0].status == "success"


def test_how_the_last_call_ends_the_run() -> None:
    empty = build_run(SOURCE, [_call([U], StepResponse(finish_reason="stop"))])
    assert (empty.status, empty.termination, empty.steps[0].status) == (
        "succeeded",
        "empty_final",
        "empty",
    )
    failed = build_run(SOURCE, [_call([U], None, error="HTTP 500")])
    assert (failed.status, failed.termination, failed.error.message) == (  # type: ignore[union-attr]
        "error",
        "provider_error",
        "HTTP 500",
    )
    call = ToolCall(id="c1", name="t")
    cut = build_run(SOURCE, [_call([U], StepResponse(tool_calls=[call]))])
    # Cut short with a tool call pending: what the engine records at its step cap.
    assert (cut.status, cut.termination) == ("failed", "step_cap")
    assert cut.error and cut.error.type == "StepCapReached"
    assert cut.fidelity and [g.steps for g in cut.fidelity.gaps if g.kind == "ending"] == [[1]]
    filtered = build_run(SOURCE, [_call([U], StepResponse(finish_reason="content_filter"))])
    assert (filtered.status, filtered.termination, filtered.output) == (
        "failed",
        "empty_final",
        None,
    )
    assert filtered.policy.on_empty_final == "error" and empty.policy.on_empty_final == "finalize"
    blank = build_run(SOURCE, [_call([U], StepResponse(text=" \n", finish_reason="stop"))])
    assert blank.steps[0].status == "empty"  # blank text is no content, as the engine reads it
    refused = build_run(SOURCE, [_call([U], StepResponse(refusal="no", finish_reason="stop"))])
    assert (refused.status, refused.termination, refused.budgets.attempts_used) == (
        "failed",
        "refusal",
        1,
    )
    assert refused.steps[0].verdicts[0].validator == "refusal"


def test_the_rebuilt_policy_sends_the_recorded_requests() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "Out", "schema": {"type": "object"}}}
    record = build_run(
        SOURCE,
        [_call([U], _answer('{"a": 1}'), tools=[], tool_choice_known=True, response_format=fmt)],
    )
    assert record.policy.final_step == "none" and record.policy.output_mode == "native"
    assert record.output == {"a": 1}
    assert record.scenario_source["output"] == {"schema": {"type": "object"}, "name": "Out"}
    assert record.fidelity and record.fidelity.replayable
    forced = build_run(
        SOURCE,
        [_call([U], _answer("x"), tools=[ToolSpec(name="t")], tool_choice="none",
               tool_choice_known=True)],
    )  # fmt: skip
    assert forced.fidelity and not forced.fidelity.replayable
    (gap,) = [g for g in forced.fidelity.gaps if g.kind == "request_differs"]
    assert gap.detail.startswith("tool_choice: the source sent 'none'")


def test_fidelity_gaps_name_the_steps_they_touch() -> None:
    tools = [ToolSpec(name="t")]
    calls = [
        _call([U], _answer("a"), tools=tools, tool_choice_known=True, sampling={}, latency_ms=1.0),
        _call([U, Message(role="user", content="more")], _answer("b"), latency_ms=None),
    ]
    fidelity = build_run(SOURCE, calls).fidelity
    assert fidelity is not None
    gaps = {g.kind: g.steps for g in fidelity.gaps}
    assert gaps["tool_definitions"] == [2] and gaps["tool_choice"] == [2]
    assert gaps["sampling"] == [2] and gaps["timing"] == [2] and gaps["verdicts"] == [1]
    assert gaps["raw"] == []  # every step: said once for the run
    assert fidelity.replayable is False
    known = [_call([U], _answer("a"), tools=[], tool_choice_known=True, sampling={})]
    assert build_run(SOURCE, known).fidelity.replayable is True  # type: ignore[union-attr]
    unknown = [_call([], _answer(""), content_known=False, tools=[], tool_choice_known=True)]
    assert build_run(SOURCE, unknown).fidelity.replayable is False  # type: ignore[union-attr]


def test_log_calls_group_into_turns_by_conversation() -> None:
    other = Message(role="user", content="other")
    a1 = _call([U], _answer("x"))
    b1 = _call([other], _answer("y"))
    a2 = _call([U, Message(role="assistant", content="x"), Message(role="user", content="and?")],
               _answer("z"))  # fmt: skip
    repeat = _call([U], _answer("x"))  # the same request again: a new turn, not a retry
    assert group_turns([a1, b1, a2, repeat]) == [[a1, a2], [b1], [repeat]]


def _with_format(fmt: dict[str, object], text: str = "{}") -> RunRecord:
    call = _call([U], _answer(text), tools=[], tool_choice_known=True, response_format=fmt)
    return build_run(SOURCE, [call])


def test_a_response_format_the_engine_cannot_send_is_named() -> None:
    plain = _with_format({"type": "json_object"})
    assert plain.fidelity and plain.fidelity.replay_verdict() == (
        "not replayable as recorded (a replay sends another response_format)"
    )
    broken = {"type": "json_schema", "json_schema": {"name": "X", "schema": {"type": 5}}}
    bad = _with_format(broken)
    assert bad.policy.output_mode == "tool" and bad.status == "succeeded"
    assert bad.fidelity and bad.fidelity.replay_verdict() == (
        "not replayable as recorded (the rebuilt scenario does not load)"
    )
    schema = {"type": "json_schema", "json_schema": {"name": "Y", "schema": {"type": "object"}}}
    prose = _with_format(schema, "not json")
    assert (prose.status, prose.termination) == ("failed", "validator_exhausted")
    assert prose.steps[0].verdicts[0].validator == "output"
    assert prose.fidelity and prose.fidelity.replayable
