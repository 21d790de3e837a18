"""B5: the invalid-output handler (raise / fallback), the same shape for refusals."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.events import AttemptCleared, Event, FallbackUsed, RunFinished, ToolExecuted
from inspector.core.loop import run_turn
from inspector.core.messages import Message
from inspector.core.records import RunError, RunRecord, Verdict
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider

BASE: dict[str, Any] = {"name": "b5", "prompt": {"system": "sys", "user": "hi"}}
USER = {"role": "user", "content": "hi"}
SCHEMA = {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}
SHORT = [{"kind": "max_length", "max": 5}]
TOO_LONG = [{"text": "toolongtext"}, {"text": "abcdefgh"}]  # 11 and 8 characters
NO_FALLBACK = (
    "test.toml: policy: a fallback handler is selected but neither fallback nor "
    "fallback_function is set"
)

FALLBACKS = """
import json

def report(ctx):  # a plain-text turn needs a string fallback: the context as JSON text
    return json.dumps({
        "trigger": ctx.trigger,
        "attempts": ctx.attempts,
        "steps": ctx.steps,
        "last_output": ctx.last_output,
        "verdicts": [v["validator"] for v in ctx.verdicts],
        "history": [m["role"] for m in ctx.history],
    })

def body(ctx):
    return {"body": f"{ctx.trigger} after {ctx.attempts}: {json.dumps(ctx.last_output)}"}

def wrong_shape(ctx):
    return {"text": "no body"}

def broken(ctx):
    raise RuntimeError("cannot build a fallback\\nfallback store offline")

def interrupted(ctx):
    raise KeyboardInterrupt("fallback store asked to stop")

def nothing(ctx):
    return None

def a_set(ctx):
    return {"body": {"Sam", "3pm"}}

def not_a_number(ctx):
    return {"body": float("nan")}
"""


@pytest.fixture
def hooks(tmp_path: Path) -> Path:
    (tmp_path / "hooks.py").write_text(textwrap.dedent(FALLBACKS), encoding="utf-8")
    return tmp_path


async def run(data: dict[str, Any], tmp_path: Path) -> tuple[RunRecord, list[Event]]:
    scenario = scenario_from_dict({**BASE, **data}, source="test.toml", base_dir=tmp_path)
    provider = build_provider(scenario)
    events: list[Event] = []
    record = await run_turn(scenario, provider, events.append)
    assert all(s.status != "pending" for s in record.steps)
    return record, events


def dump(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


def fallback_events(events: list[Event]) -> list[tuple[Any, str]]:
    return [(e.value, e.trigger) for e in events if isinstance(e, FallbackUsed)]


# ---- on_invalid_output = "raise" (the default) ----------------------------------------------


async def test_raise_fails_with_validator_exhausted(tmp_path: Path) -> None:
    record, events = await run(
        {"validators": SHORT, "policy": {"max_attempts": 2}, "script": TOO_LONG}, tmp_path
    )
    assert record.policy.on_invalid_output == "raise"
    assert (record.status, record.termination) == ("failed", "validator_exhausted")
    assert record.error == RunError(
        type="ValidatorExhausted",
        message="no acceptable output after 2 attempts: max_length: 8 characters > 5",
    )
    assert record.output is None and record.fallback_trigger is None
    assert [(s.attempt, s.status) for s in record.steps] == [
        (1, "failed_validation"),
        (2, "failed_validation"),
    ]
    assert fallback_events(events) == []
    # The first attempt was replaced by a retry and cleared; the turn ended on the second,
    # which stays: it is what the end user saw last.
    assert [s.cleared for s in record.steps] == [True, False]
    assert [(e.index, e.attempt) for e in events if isinstance(e, AttemptCleared)] == [(1, 1)]
    assert dump(record.transcript) == [USER, {"role": "assistant", "content": "abcdefgh"}]


async def test_raise_message_lists_every_failing_reason(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "validators": [*SHORT, {"kind": "regex_absent", "pattern": "[*]"}],
            "policy": {"max_attempts": 1},
            "script": [{"text": "**bold**"}],
        },
        tmp_path,
    )
    assert record.error == RunError(
        type="ValidatorExhausted",
        message="no acceptable output after 1 attempt: max_length: 8 characters > 5; "
        "regex_absent: found '*' at 0",
    )


# ---- on_invalid_output = "fallback" ---------------------------------------------------------


async def test_static_fallback(tmp_path: Path) -> None:
    record, events = await run(
        {
            "validators": SHORT,
            "policy": {"max_attempts": 2, "on_invalid_output": "fallback", "fallback": "Later."},
            "script": TOO_LONG,
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("fallback", "fallback")
    assert record.fallback_trigger == "validator_exhausted"
    assert record.output == "Later."
    assert record.error is None
    assert [s.status for s in record.steps] == ["failed_validation", "failed_validation"]
    assert fallback_events(events) == [("Later.", "validator_exhausted")]
    assert [e.kind for e in events][-3:] == ["step_finished", "fallback_used", "run_finished"]
    # The fallback replaces the last attempt: every failed attempt is cleared.
    assert [s.cleared for s in record.steps] == [True, True]
    assert [(e.index, e.attempt) for e in events if isinstance(e, AttemptCleared)] == [
        (1, 1),
        (2, 2),
    ]
    assert dump(record.transcript) == [USER]  # fallback_in_history = false by default


async def test_fallback_in_history_adds_an_assistant_message(tmp_path: Path) -> None:
    policy = {"max_attempts": 1, "on_invalid_output": "fallback", "fallback": "Later."}
    data = {"validators": SHORT, "script": TOO_LONG}
    kept, _ = await run({**data, "policy": {**policy, "fallback_in_history": True}}, tmp_path)
    dropped, _ = await run({**data, "policy": {**policy, "fallback_in_history": False}}, tmp_path)
    assert dump(kept.transcript) == [USER, {"role": "assistant", "content": "Later."}]
    assert dump(dropped.transcript) == [USER]
    assert kept.output == dropped.output == "Later."


async def test_structured_fallback_in_history_is_json_text(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "output": {"schema": SCHEMA},
            "policy": {
                "max_attempts": 1,
                "on_invalid_output": "fallback",
                "fallback": {"body": "Meeting moved."},
                "fallback_in_history": True,
            },
            "script": [{"final": {"body": 3}}],
        },
        tmp_path,
    )
    assert (record.status, record.output) == ("fallback", {"body": "Meeting moved."})
    assert dump(record.transcript) == [
        USER,
        {"role": "assistant", "content": '{"body": "Meeting moved."}'},
    ]


async def test_fallback_function_gets_the_context(hooks: Path) -> None:
    record, events = await run(
        {
            "validators": SHORT,
            "policy": {
                "max_attempts": 2,
                "on_invalid_output": "fallback",
                "fallback_function": "hooks.py:report",
            },
            "script": TOO_LONG,
        },
        hooks,
    )
    assert record.status == "fallback"
    assert json.loads(record.output) == {
        "trigger": "validator_exhausted",
        "attempts": 2,
        "steps": 2,
        "last_output": "abcdefgh",
        "verdicts": ["max_length"],
        "history": ["user", "assistant", "user"],  # what attempt 2 saw
    }
    assert fallback_events(events) == [(record.output, "validator_exhausted")]


async def test_fallback_function_wins_over_the_static_value(hooks: Path) -> None:
    record, _ = await run(
        {
            "output": {"schema": SCHEMA},
            "policy": {
                "max_attempts": 1,
                "on_invalid_output": "fallback",
                "fallback": {"body": "static"},
                "fallback_function": "hooks.py:body",
            },
            "script": [{"final": {"body": 7}}],
        },
        hooks,
    )
    assert record.status == "fallback"
    assert record.output == {"body": 'validator_exhausted after 1: {"body": 7}'}


async def test_invalid_static_fallback_is_an_error(tmp_path: Path) -> None:
    record, events = await run(
        {
            "output": {"schema": SCHEMA},
            "policy": {"max_attempts": 1, "on_invalid_output": "fallback", "fallback": {"b": 1}},
            "script": [{"final": {"body": 3}}],
        },
        tmp_path,
    )
    assert record.status == "error"
    assert record.termination == "validator_exhausted"
    assert record.error == RunError(
        type="InvalidFallback",
        message="the fallback does not match the output schema: 'body' is a required property",
    )
    assert record.output is None
    assert fallback_events(events) == []


async def test_invalid_fallback_function_result_is_an_error(hooks: Path) -> None:
    record, events = await run(
        {
            "output": {"schema": SCHEMA},
            "policy": {
                "max_attempts": 1,
                "on_invalid_output": "fallback",
                "fallback_function": "hooks.py:wrong_shape",
                "fallback_in_history": True,
            },
            "script": [{"text": "plain text"}],
        },
        hooks,
    )
    assert (record.status, record.termination) == ("error", "validator_exhausted")
    assert record.error == RunError(
        type="InvalidFallback",
        message="the fallback does not match the output schema: 'body' is a required property",
    )
    assert fallback_events(events) == []
    # An invalid fallback is never recorded; it replaced nothing, so the failed reply stays.
    assert [s.cleared for s in record.steps] == [False]
    assert dump(record.transcript) == [USER, {"role": "assistant", "content": "plain text"}]


@pytest.mark.parametrize(
    ("output", "policy", "message"),
    [
        (
            None,
            {"fallback": [1, 2]},
            "a plain-text turn needs a string fallback, got list",
        ),
        (
            None,
            {"fallback": {"body": "Later."}},
            "a plain-text turn needs a string fallback, got dict",
        ),
        (None, {"fallback_function": "hooks.py:nothing"}, "the fallback is empty (None)"),
        (SCHEMA, {"fallback_function": "hooks.py:nothing"}, "the fallback is empty (None)"),
        (
            SCHEMA,
            {"fallback_function": "hooks.py:a_set"},
            "the fallback is not JSON-serializable: Object of type set is not JSON serializable",
        ),
        (
            SCHEMA,
            {"fallback_function": "hooks.py:not_a_number"},
            "the fallback is not JSON-serializable: Out of range float values are not JSON "
            "compliant",
        ),
    ],
    ids=["list-for-text", "dict-for-text", "none-for-text", "none", "set", "nan"],
)
async def test_unusable_fallback_is_an_error(
    hooks: Path, output: dict[str, Any] | None, policy: dict[str, Any], message: str
) -> None:
    data: dict[str, Any] = {
        "validators": SHORT if output is None else [],
        "policy": {"max_attempts": 1, "on_invalid_output": "fallback", **policy},
        "script": [{"text": "toolongtext"}] if output is None else [{"final": {"body": 3}}],
    }
    if output is not None:
        data["output"] = {"schema": output}
    record, events = await run(data, hooks)

    assert (record.status, record.termination, record.output, record.fallback_trigger) == (
        "error",
        "validator_exhausted",
        None,
        None,
    )
    assert record.error == RunError(type="InvalidFallback", message=message)
    assert fallback_events(events) == []
    assert [(s.status, s.cleared) for s in record.steps] == [("failed_validation", False)]


async def test_fallback_function_that_raises_is_an_error(hooks: Path) -> None:
    record, events = await run(
        {
            "validators": SHORT,
            "policy": {
                "max_attempts": 1,
                "on_invalid_output": "fallback",
                "fallback_function": "hooks.py:broken",
            },
            "script": TOO_LONG,
        },
        hooks,
    )
    assert (record.status, record.termination) == ("error", "validator_exhausted")
    assert record.error == RunError(
        type="FallbackError",
        message="fallback_function raised RuntimeError: fallback store offline",
    )
    assert record.output is None
    assert [s.status for s in record.steps] == ["failed_validation"]
    assert fallback_events(events) == []
    assert isinstance(events[-1], RunFinished)


async def test_fallback_function_raising_keyboard_interrupt_is_an_error(hooks: Path) -> None:
    record, events = await run(
        {
            "validators": SHORT,
            "policy": {
                "max_attempts": 1,
                "on_invalid_output": "fallback",
                "fallback_function": "hooks.py:interrupted",
            },
            "script": TOO_LONG,
        },
        hooks,
    )
    assert (record.status, record.termination) == ("error", "validator_exhausted")
    assert record.error == RunError(
        type="FallbackError",
        message="fallback_function raised KeyboardInterrupt: fallback store asked to stop",
    )
    assert [(s.status, s.cleared) for s in record.steps] == [("failed_validation", False)]
    assert dump(record.transcript) == [USER, {"role": "assistant", "content": "toolongtext"}]
    assert fallback_events(events) == []


# ---- the handler is not a retry: no tool runs again ------------------------------------------


@pytest.mark.parametrize("handler", ["raise", "fallback"])
async def test_handler_never_re_executes_tools(tmp_path: Path, handler: str) -> None:
    (tmp_path / "tools.py").write_text(
        textwrap.dedent(
            f"""
            def send(to):
                with open({str(tmp_path / "calls.log")!r}, "a") as f:
                    f.write(to + "\\n")
                return "sent"
            """
        ),
        encoding="utf-8",
    )
    record, events = await run(
        {
            "tools": [{"name": "send", "function": "tools.py:send", "side_effects": True}],
            "validators": SHORT,
            "policy": {"max_attempts": 2, "on_invalid_output": handler, "fallback": "Done."},
            "script": [{"tool_calls": [{"name": "send", "arguments": {"to": "sam"}}]}, *TOO_LONG],
        },
        tmp_path,
    )
    assert record.status == ("failed" if handler == "raise" else "fallback")
    assert (tmp_path / "calls.log").read_text() == "sam\n"
    assert sum(isinstance(e, ToolExecuted) for e in events) == 1
    assert [len(s.tool_results) for s in record.steps] == [1, 0, 0]


# ---- the policy refuses a fallback handler without a value -----------------------------------


@pytest.mark.parametrize("key", ["on_invalid_output", "on_step_cap", "on_refusal"])
def test_fallback_handler_needs_a_value(tmp_path: Path, key: str) -> None:
    data = {**BASE, "policy": {key: "fallback"}, "script": [{"text": "x"}]}
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(data, source="test.toml", base_dir=tmp_path)
    assert str(info.value) == (
        "test.toml: policy.fallback: a fallback handler is chosen but neither fallback nor "
        "fallback_function is set"
    )
    assert "\n" not in str(info.value)


def test_fallback_function_alone_satisfies_the_policy(tmp_path: Path) -> None:
    data = {
        **BASE,
        "policy": {"on_invalid_output": "fallback", "fallback_function": "hooks.py:body"},
        "script": [{"text": "x"}],
    }
    scenario = scenario_from_dict(data, source="test.toml", base_dir=tmp_path)
    assert scenario.policy.fallback is None
    assert scenario.policy.fallback_function == "hooks.py:body"


# ---- refusals ----------------------------------------------------------------------------------

REFUSED = Verdict.failed("refusal", "I can't help with that.", "Please answer the request.")


async def test_refusal_raises_by_default(tmp_path: Path) -> None:
    record, events = await run(
        {"script": [{"refusal": "I can't help with that."}, {"text": "never"}]}, tmp_path
    )
    assert record.policy.on_refusal == "raise"
    assert (record.status, record.termination) == ("failed", "refusal")
    assert record.error == RunError(type="Refusal", message="I can't help with that.")
    [step] = record.steps  # max_attempts is 3, but a refusal is not retried
    assert (step.status, step.verdicts, step.feedback) == ("failed_validation", [REFUSED], [])
    assert step.response is not None and step.response.refusal == "I can't help with that."
    assert step.cleared is False  # the turn ends on the refusal: it stays
    assert [e.kind for e in events] == [
        "run_started",
        "step_started",
        "verdicts",
        "step_finished",
        "run_finished",
    ]
    assert dump(record.transcript) == [
        USER,
        {"role": "assistant", "content": "I can't help with that."},
    ]


async def test_refusal_does_not_use_the_invalid_output_fallback(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "policy": {"on_invalid_output": "fallback", "fallback": "Later."},
            "script": [{"refusal": "I can't help with that."}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("failed", "refusal")
    assert record.output is None


async def test_refusal_retry_then_success(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "policy": {"on_refusal": "retry"},
            "script": [{"refusal": "I can't help with that."}, {"text": "Sure: 3pm."}],
        },
        tmp_path,
    )
    assert (record.status, record.termination, record.output) == ("succeeded", "stop", "Sure: 3pm.")
    first, second = record.steps
    assert (first.attempt, first.status, first.verdicts) == (1, "failed_validation", [REFUSED])
    nudge = {"role": "user", "content": "Please answer the request."}
    assert dump(first.feedback) == [nudge]
    assert (second.attempt, second.status) == (2, "success")
    assert dump(second.request.messages) == [
        USER,
        {"role": "assistant", "content": "I can't help with that."},
        nudge,
    ]
    assert dump(record.transcript) == [USER, {"role": "assistant", "content": "Sure: 3pm."}]


async def test_refusal_retry_exhausted_fails_with_refusal(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "policy": {"on_refusal": "retry", "max_attempts": 2},
            "script": [{"refusal": "No."}, {"refusal": "Still no."}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("failed", "refusal")
    assert record.error == RunError(
        type="Refusal", message="no acceptable output after 2 attempts: refusal: Still no."
    )
    assert len(record.steps) == 2


async def test_refusal_fallback(tmp_path: Path) -> None:
    record, events = await run(
        {
            "policy": {"on_refusal": "fallback", "fallback": "Ask a human."},
            "script": [{"refusal": "I can't help with that."}, {"text": "never"}],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("fallback", "fallback")
    assert (record.output, record.fallback_trigger) == ("Ask a human.", "refusal")
    assert fallback_events(events) == [("Ask a human.", "refusal")]
    assert len(record.steps) == 1


async def test_refusal_fallback_function_sees_the_refusal_trigger(hooks: Path) -> None:
    record, _ = await run(
        {
            "policy": {"on_refusal": "fallback", "fallback_function": "hooks.py:report"},
            "script": [{"refusal": "No."}],
        },
        hooks,
    )
    assert record.status == "fallback"
    context = json.loads(record.output)
    assert (context["trigger"], context["verdicts"], context["attempts"]) == (
        "refusal",
        ["refusal"],
        1,
    )
