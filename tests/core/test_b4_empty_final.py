"""B4: a final step with empty content is a first-class, always-finalized step.

Every run in this file goes through ``run``, whose sink tracks open steps: each ``StepStarted``
must be matched by exactly one ``StepFinished`` before ``RunFinished``, and no step of the
record is ever ``pending``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector.core.events import (
    AttemptCleared,
    Event,
    FallbackUsed,
    FeedbackInjected,
    RunFinished,
    StepFinished,
    StepStarted,
    ToolExecuted,
)
from inspector.core.loop import run_turn
from inspector.core.messages import Message
from inspector.core.records import RunError, RunRecord, Verdict
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider

BASE: dict[str, Any] = {"name": "b4", "prompt": {"system": "sys", "user": "hi"}}
EMPTY_VERDICT = Verdict.failed(
    "empty", "empty reply: no text and no tool calls", "Your reply was empty. Answer the user."
)
FEEDBACK = {"role": "user", "content": "Your reply was empty. Answer the user."}
USER = {"role": "user", "content": "hi"}
SCHEMA = {"type": "object", "properties": {"body": {"type": "string"}}}
LOOKUP = {"name": "lookup", "result": "Sam: +1 555 0100"}


class StepTracker:
    """A subscriber that pairs StepStarted with StepFinished, like the store's pending rows."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.open: dict[int, StepStarted] = {}
        self.problems: list[str] = []
        self.finished_run = False

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, StepStarted):
            if event.index in self.open:
                self.problems.append(f"step {event.index} started twice")
            self.open[event.index] = event
        elif isinstance(event, StepFinished):
            started = self.open.pop(event.step.index, None)
            if started is None:
                self.problems.append(f"step {event.step.index} finished without starting")
            elif started.attempt != event.step.attempt:
                self.problems.append(f"step {event.step.index} changed attempt")
            if event.step.status == "pending":
                self.problems.append(f"step {event.step.index} finished pending")
        elif isinstance(event, RunFinished):
            if self.open:
                self.problems.append(f"run finished with open steps {sorted(self.open)}")
            self.finished_run = True
        elif self.finished_run:
            self.problems.append(f"{event.kind} after run_finished")

    def check(self, record: RunRecord) -> None:
        assert self.problems == []
        assert self.open == {}
        assert self.finished_run
        assert [s.status for s in record.steps if s.status == "pending"] == []
        started = [e.index for e in self.events if isinstance(e, StepStarted)]
        finished = [e.step.index for e in self.events if isinstance(e, StepFinished)]
        assert started == finished == [s.index for s in record.steps]


async def run(data: dict[str, Any], tmp_path: Path) -> tuple[RunRecord, list[Event]]:
    scenario = scenario_from_dict({**BASE, **data}, source="test.toml", base_dir=tmp_path)
    provider = build_provider(scenario)
    tracker = StepTracker()
    record = await run_turn(scenario, provider, tracker)
    tracker.check(record)
    return record, tracker.events


def dump(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


def transcript(record: RunRecord) -> list[dict[str, Any]]:
    return dump(record.transcript)


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


# ---- on_empty_final = "finalize" ------------------------------------------------------------


async def test_finalize_accepts_the_empty_reply(tmp_path: Path) -> None:
    record, events = await run(
        {"policy": {"on_empty_final": "finalize"}, "script": [{"empty": True}]}, tmp_path
    )
    assert (record.status, record.termination) == ("succeeded", "empty_final")
    assert record.output == ""
    assert record.error is None
    [step] = record.steps
    assert (step.index, step.attempt, step.status) == (1, 1, "empty")
    assert step.response is not None
    assert (step.response.text, step.response.tool_calls) == ("", [])
    assert step.response.finish_reason == "stop"
    assert step.verdicts == [] and step.feedback == [] and not step.cleared
    assert transcript(record) == [USER, {"role": "assistant", "content": ""}]
    assert kinds(events) == ["run_started", "step_started", "step_finished", "run_finished"]
    assert record.budgets.attempts_used == 1 and record.budgets.steps_used == 1


async def test_whitespace_only_text_counts_as_empty(tmp_path: Path) -> None:
    record, _ = await run(
        {"policy": {"on_empty_final": "finalize"}, "script": [{"text": "  \n\t "}]}, tmp_path
    )
    assert (record.status, record.termination, record.output) == ("succeeded", "empty_final", "")
    assert record.steps[0].status == "empty"
    assert transcript(record)[-1] == {"role": "assistant", "content": ""}


# ---- on_empty_final = "error" ---------------------------------------------------------------


async def test_error_fails_the_turn(tmp_path: Path) -> None:
    record, events = await run(
        {"policy": {"on_empty_final": "error"}, "script": [{"empty": True}, {"text": "never"}]},
        tmp_path,
    )
    assert (record.status, record.termination) == ("failed", "empty_final")
    assert record.error == RunError(
        type="EmptyFinal", message="step 1 returned no content (finish_reason stop)"
    )
    assert record.output is None
    [step] = record.steps
    assert (step.status, step.verdicts, step.feedback) == ("empty", [], [])
    assert transcript(record) == [USER]
    assert kinds(events) == ["run_started", "step_started", "step_finished", "run_finished"]


async def test_error_names_the_finish_reason_the_model_gave(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "policy": {"on_empty_final": "error"},
            "script": [{"empty": True, "finish_reason": "length"}],
        },
        tmp_path,
    )
    assert record.error == RunError(
        type="EmptyFinal", message="step 1 returned no content (finish_reason length)"
    )


# ---- on_empty_final = "retry" (the default) ---------------------------------------------------


async def test_retry_injects_feedback_and_the_next_attempt_succeeds(tmp_path: Path) -> None:
    record, events = await run({"script": [{"empty": True}, {"text": "ok"}]}, tmp_path)
    assert record.policy.on_empty_final == "retry"
    assert (record.status, record.termination, record.output) == ("succeeded", "stop", "ok")
    first, second = record.steps
    assert (first.index, first.attempt, first.status) == (1, 1, "empty")
    assert first.verdicts == [EMPTY_VERDICT]
    assert dump(first.feedback) == [FEEDBACK]
    assert first.cleared is False  # nothing was shown, so nothing is cleared
    assert (second.index, second.attempt, second.status) == (2, 2, "success")
    # The empty reply is not replayed to the model; only the feedback is added.
    assert dump(second.request.messages) == [USER, FEEDBACK]
    assert transcript(record)[-1] == {"role": "assistant", "content": "ok"}
    assert not any(isinstance(e, AttemptCleared) for e in events)
    [injected] = [e for e in events if isinstance(e, FeedbackInjected)]
    assert injected.index == 1 and dump(injected.messages) == [FEEDBACK]
    assert record.budgets.attempts_used == 2


async def test_retry_feedback_stays_in_transcript_when_attempts_are_not_cleared(
    tmp_path: Path,
) -> None:
    record, _ = await run(
        {
            "policy": {"clear_failed_attempts": False},
            "script": [{"empty": True}, {"text": "ok"}],
        },
        tmp_path,
    )
    assert transcript(record) == [USER, FEEDBACK, {"role": "assistant", "content": "ok"}]


async def test_retry_feedback_is_cleared_from_transcript_like_any_failed_attempt(
    tmp_path: Path,
) -> None:
    record, _ = await run({"script": [{"empty": True}, {"text": "ok"}]}, tmp_path)
    assert record.policy.clear_failed_attempts is True
    assert transcript(record) == [USER, {"role": "assistant", "content": "ok"}]


async def test_retry_exhausted_fails_with_empty_final(tmp_path: Path) -> None:
    record, events = await run(
        {"policy": {"max_attempts": 2}, "script": [{"empty": True}, {"empty": True}]}, tmp_path
    )
    assert (record.status, record.termination) == ("failed", "empty_final")
    assert record.error == RunError(
        type="EmptyFinal",
        message="no acceptable output after 2 attempts: empty: empty reply: no text and no "
        "tool calls",
    )
    assert record.output is None and record.fallback_trigger is None
    assert [(s.attempt, s.status) for s in record.steps] == [(1, "empty"), (2, "empty")]
    assert [s.verdicts for s in record.steps] == [[EMPTY_VERDICT], [EMPTY_VERDICT]]
    assert record.steps[1].feedback == []  # no feedback after the last attempt
    assert record.budgets.attempts_used == 2
    assert kinds(events).count("feedback_injected") == 1
    # An empty reply showed the user nothing: nothing to clear, nothing kept.
    assert [s.cleared for s in record.steps] == [False, False]
    assert "attempt_cleared" not in kinds(events)
    assert transcript(record) == [USER]


async def test_retry_exhausted_hands_over_to_the_fallback(tmp_path: Path) -> None:
    record, events = await run(
        {
            "policy": {"max_attempts": 1, "on_invalid_output": "fallback", "fallback": "sorry"},
            "script": [{"empty": True}],
        },
        tmp_path,
    )
    assert (record.status, record.termination, record.output) == ("fallback", "fallback", "sorry")
    assert record.fallback_trigger == "empty_final"
    [used] = [e for e in events if isinstance(e, FallbackUsed)]
    assert (used.value, used.trigger) == ("sorry", "empty_final")
    assert record.steps[0].status == "empty"


async def test_retry_with_no_step_left_hits_the_step_cap(tmp_path: Path) -> None:
    record, _ = await run(
        {"policy": {"max_steps": 1}, "script": [{"empty": True}, {"text": "never"}]}, tmp_path
    )
    assert (record.status, record.termination) == ("failed", "step_cap")
    assert record.error is not None and record.error.type == "StepCapReached"
    assert [s.status for s in record.steps] == ["empty"]


# ---- empty after a tool round trip ----------------------------------------------------------


async def test_empty_reply_after_a_tool_round_trip_is_retried(tmp_path: Path) -> None:
    record, events = await run(
        {
            "tools": [LOOKUP],
            "script": [
                {"tool_calls": [{"name": "lookup", "arguments": {}}]},
                {"empty": True},
                {"text": "Sam's number is +1 555 0100"},
            ],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("succeeded", "stop")
    assert record.output == "Sam's number is +1 555 0100"
    assert [(s.index, s.attempt, s.status) for s in record.steps] == [
        (1, 1, "success"),
        (2, 1, "empty"),
        (3, 2, "success"),
    ]
    work = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1_0", "name": "lookup", "arguments": {}}],
        },
        {
            "role": "tool",
            "content": "Sam: +1 555 0100",
            "tool_call_id": "call_1_0",
            "name": "lookup",
        },
    ]
    assert dump(record.steps[2].request.messages) == [USER, *work, FEEDBACK]
    assert sum(isinstance(e, ToolExecuted) for e in events) == 1  # the retry re-runs no tool


async def test_finalize_after_a_tool_round_trip_keeps_the_work(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "tools": [LOOKUP],
            "policy": {"on_empty_final": "finalize"},
            "script": [{"tool_calls": [{"name": "lookup", "id": "c1"}]}, {"empty": True}],
        },
        tmp_path,
    )
    assert (record.status, record.termination, record.output) == ("succeeded", "empty_final", "")
    assert [s.status for s in record.steps] == ["success", "empty"]
    assert [(m["role"], m["content"]) for m in transcript(record)] == [
        ("user", "hi"),
        ("assistant", None),
        ("tool", "Sam: +1 555 0100"),
        ("assistant", ""),
    ]


async def test_error_after_a_tool_round_trip(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "tools": [LOOKUP],
            "policy": {"on_empty_final": "error"},
            "script": [{"tool_calls": [{"name": "lookup"}]}, {"empty": True}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("failed", "empty_final")
    assert record.error == RunError(
        type="EmptyFinal", message="step 2 returned no content (finish_reason stop)"
    )
    assert [s.status for s in record.steps] == ["success", "empty"]


# ---- structured output: an empty object is not an empty message (B5) ---------------------------


async def test_empty_object_through_the_final_answer_tool_is_an_output(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "output": {"schema": SCHEMA},
            "policy": {"on_empty_final": "error"},
            "script": [{"final": {}}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("succeeded", "stop")
    assert record.output == {}
    [step] = record.steps
    assert step.status == "success" and step.internal_tool is True
    assert step.response is not None
    assert [(c.name, c.arguments) for c in step.response.tool_calls] == [("final_answer", {})]
    assert transcript(record) == [USER, {"role": "assistant", "content": "{}"}]


async def test_no_message_with_an_output_schema_finalizes_to_none(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "output": {"schema": SCHEMA},
            "policy": {"on_empty_final": "finalize"},
            "script": [{"empty": True}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("succeeded", "empty_final")
    assert record.output is None  # no message: no output, unlike {} above
    assert record.steps[0].status == "empty" and record.steps[0].internal_tool is False
    assert transcript(record) == [USER, {"role": "assistant", "content": ""}]


async def test_empty_object_is_judged_against_the_schema_not_treated_as_empty(
    tmp_path: Path,
) -> None:
    schema = {**SCHEMA, "required": ["body"]}
    record, _ = await run(
        {
            "output": {"schema": schema},
            "policy": {"max_attempts": 1},
            "script": [{"final": {}}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("failed", "validator_exhausted")
    [step] = record.steps
    assert step.status == "failed_validation"
    assert [(v.validator, v.reason) for v in step.verdicts] == [
        ("output", "does not match the output schema: 'body' is a required property")
    ]


async def test_no_message_with_an_output_schema_is_retried(tmp_path: Path) -> None:
    record, _ = await run(
        {"output": {"schema": SCHEMA}, "script": [{"empty": True}, {"final": {"body": "x"}}]},
        tmp_path,
    )
    assert (record.status, record.output) == ("succeeded", {"body": "x"})
    assert [(s.status, [v.validator for v in s.verdicts]) for s in record.steps] == [
        ("empty", ["empty"]),
        ("success", []),
    ]
