"""Validators: every built-in with its exact reason and feedback, options, and python validators
(every kind of return value, raising, timing out — never crashing a run)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from inspector.core.errors import ScenarioError
from inspector.core.events import Event, VerdictsReady
from inspector.core.loading import forget
from inspector.core.loop import run_turn
from inspector.core.messages import Message, ToolCall, assistant, user
from inspector.core.records import RunRecord, SourceLocation, Verdict
from inspector.core.scenario import scenario_from_dict
from inspector.core.validators import (
    ValidationContext,
    Validator,
    ValidatorSpec,
    compile_validators,
)
from inspector.providers.scripted import ScriptedProvider

SPECS: TypeAdapter[list[ValidatorSpec]] = TypeAdapter(list[ValidatorSpec])
BASE: dict[str, Any] = {"name": "validators", "prompt": {"system": "sys", "user": "hi"}}

CHECKS_PY = """
import asyncio
import time

from inspector.core.records import Verdict

def ok_none(output, ctx):
    return None

def ok_true(output, ctx):
    return True

def fail_false(output, ctx):
    return False

def fail_str(output, ctx):
    return f"Say it in under {len(output) - 1} characters."

def verdict(output, ctx):
    return Verdict.failed("", "too formal", "Be casual.")

def named_verdict(output, ctx):
    return Verdict(validator="tone", ok=True, status="pass", reason="casual")

def raises(output, ctx):
    raise ValueError("cannot judge\\nbad input")

def wrong_type(output, ctx):
    return 42

def sees_ctx(output, ctx):
    roles = ",".join(m["role"] for m in ctx.history)
    return f"attempt={ctx.attempt} step={ctx.step} roles={roles} output={output!r}"

def stops(output, ctx):
    ctx.stop()

def sleeps(output, ctx):
    time.sleep(0.3)

async def async_ok(output, ctx):
    await asyncio.sleep(0)
    return output == "fine" or "Answer with 'fine'."

async def async_sleeps(output, ctx):
    await asyncio.sleep(30)
"""


@pytest.fixture
def base_dir(tmp_path: Path) -> Path:
    (tmp_path / "checks.py").write_text(textwrap.dedent(CHECKS_PY), encoding="utf-8")
    return tmp_path


def ctx(messages: list[Message] | None = None, **kw: Any) -> ValidationContext:
    return ValidationContext(attempt=1, step=1, messages=messages or [user("hi")], **kw)


def one(spec: dict[str, Any], base_dir: Path = Path("."), timeout_s: float = 5.0) -> Validator:
    [validator] = compile_validators(
        SPECS.validate_python([spec]), base_dir, timeout_s, source="test.toml"
    )
    return validator


async def judge(
    spec: dict[str, Any], output: Any, base_dir: Path = Path("."), **kw: Any
) -> Verdict:
    return await one(spec, base_dir, kw.pop("timeout_s", 5.0)).judge(output, ctx(**kw))


def passed(name: str, reason: str = "") -> Verdict:
    return Verdict.passed(name, reason)


# ---- built-ins -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "output", "expected"),
    [
        ({"kind": "non_empty"}, "hi", passed("non_empty")),
        (
            {"kind": "non_empty"},
            " \n ",
            Verdict.failed("non_empty", "empty output", "Your answer was empty. Answer the user."),
        ),
        ({"kind": "max_length", "max": 5}, "abcde", passed("max_length", "5 ≤ 5 characters")),
        (
            {"kind": "max_length", "max": 5},
            "abcdefg",
            Verdict.failed(
                "max_length",
                "7 characters > 5",
                "Keep the answer to at most 5 characters (it had 7).",
            ),
        ),
        ({"kind": "min_length", "min": 3}, "abc", passed("min_length", "3 ≥ 3 characters")),
        (
            {"kind": "min_length", "min": 3},
            "ab",
            Verdict.failed(
                "min_length", "2 characters < 3", "Write at least 3 characters (it had 2)."
            ),
        ),
        ({"kind": "regex_absent", "pattern": "[*_#`]"}, "plain text", passed("regex_absent")),
        (
            {"kind": "regex_absent", "pattern": "[*_#`]"},
            "Hi **Sam**",
            Verdict.failed("regex_absent", "found '*' at 3", "The answer must not contain '*'."),
        ),
        (
            {"kind": "regex_absent", "pattern": "sorry", "ignore_case": True},
            "So SORRY",
            Verdict.failed(
                "regex_absent", "found 'SORRY' at 3", "The answer must not contain 'SORRY'."
            ),
        ),
        ({"kind": "regex_present", "pattern": "pm$"}, "moved to 3pm", passed("regex_present")),
        (
            {"kind": "regex_present", "pattern": "pm$"},
            "moved to 3 o'clock",
            Verdict.failed(
                "regex_present", "no match for 'pm$'", "The answer must match the pattern 'pm$'."
            ),
        ),
        (
            {"kind": "json_schema", "schema": {"type": "object", "required": ["a"]}},
            '{"a": 1}',
            passed("json_schema"),
        ),
        (
            {"kind": "json_schema", "schema": {"type": "object", "required": ["a"]}},
            {"a": 1},
            passed("json_schema"),
        ),
        (
            {"kind": "json_schema", "schema": {"properties": {"a": {"type": "integer"}}}},
            '{"a": "x"}',
            Verdict.failed(
                "json_schema",
                "a: 'x' is not of type 'integer'",
                "The answer does not match the schema: a: 'x' is not of type 'integer'",
            ),
        ),
        (
            {"kind": "json_schema", "schema": {"type": "object"}},
            "not json",
            Verdict.failed(
                "json_schema", "not JSON: Expecting value", "Answer with valid JSON only."
            ),
        ),
    ],
)
async def test_builtin(spec: dict[str, Any], output: Any, expected: Verdict) -> None:
    assert await judge(spec, output) == expected


async def test_max_length_counts_json_text_of_structured_output() -> None:
    verdict = await judge({"kind": "max_length", "max": 10}, {"body": "hello"})
    assert verdict.reason == "17 characters > 10"  # len('{"body": "hello"}')


CALL = ToolCall(id="c1", name="lookup", arguments={"name": "Sam"})


async def test_calls_tool_passes_when_an_earlier_step_called_it() -> None:
    history = [user("hi"), assistant(None, (CALL,)), Message(role="tool", content="x")]
    verdict = await judge({"kind": "calls_tool", "tool": "lookup"}, "done", messages=history)
    assert verdict == passed("calls_tool")


async def test_calls_tool_passes_with_a_pending_call() -> None:
    verdict = await judge(
        {"kind": "calls_tool", "tool": "lookup"},
        "",
        pending_tool_calls=[{"id": "c1", "name": "lookup", "arguments": {}}],
    )
    assert verdict.ok


async def test_calls_tool_fails_when_never_called() -> None:
    other = ToolCall(id="c2", name="search", arguments={})
    verdict = await judge(
        {"kind": "calls_tool", "tool": "lookup"},
        "done",
        messages=[user("hi"), assistant(None, (other,))],
    )
    assert verdict == Verdict.failed(
        "calls_tool", "tool 'lookup' was not called", "Call the lookup tool before answering."
    )


async def test_calls_tool_in_a_turn(base_dir: Path) -> None:
    record, _ = await run(
        {
            "tools": [{"name": "lookup", "result": "x"}],
            "validators": [{"kind": "calls_tool", "tool": "lookup"}],
            "policy": {"max_attempts": 2},
            "script": [
                {"text": "guessing"},
                {"tool_calls": [{"name": "lookup"}]},
                {"text": "looked it up"},
            ],
        },
        base_dir,
    )
    assert (record.status, record.output) == ("succeeded", "looked it up")
    assert [[(v.validator, v.ok) for v in s.verdicts] for s in record.steps] == [
        [("calls_tool", False)],
        [],
        [("calls_tool", True)],
    ]


# ---- options ---------------------------------------------------------------------------------

DOC = {"body": "Hi **Sam**", "meta": {"lang": "english"}, "items": ["a", "bbbb"]}


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"kind": "regex_absent", "pattern": r"\*", "field": "body"}, "found '*' at 3"),
        ({"kind": "max_length", "max": 3, "field": "meta.lang"}, "7 characters > 3"),
        ({"kind": "max_length", "max": 3, "field": "items.1"}, "4 characters > 3"),
        (
            {"kind": "json_schema", "schema": {"type": "string"}, "field": "meta"},
            "{'lang': 'english'} is not of type 'string'",
        ),
    ],
)
async def test_field_selects_part_of_a_structured_output(spec: dict[str, Any], reason: str) -> None:
    verdict = await judge(spec, DOC)
    assert (verdict.ok, verdict.status, verdict.reason) == (False, "fail", reason)


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "non_empty", "field": "missing.path"},
        {"kind": "non_empty", "field": "items.9"},
        {"kind": "max_length", "max": 100, "field": "body.x"},  # a string has no fields
        {"kind": "regex_absent", "pattern": "x", "field": "meta.language"},
        {"kind": "json_schema", "schema": {"type": "string"}, "field": "missing.path"},
    ],
)
async def test_field_not_in_the_output_is_an_error_verdict(spec: dict[str, Any]) -> None:
    # A typo in `field` must not pass silently (nor fail as if the model had answered badly).
    verdict = await judge(spec, DOC)
    assert verdict == Verdict.errored(spec["kind"], f"field {spec['field']!r} is not in the output")


async def test_field_not_in_the_output_of_a_python_validator(base_dir: Path) -> None:
    verdict = await judge(py("ok_true", field="title"), DOC, base_dir)
    assert verdict == Verdict.errored("ok_true", "field 'title' is not in the output")


async def test_field_not_in_the_output_rejects_without_feedback_in_a_turn(base_dir: Path) -> None:
    schema = {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}
    record, _ = await run(
        {
            "output": {"schema": schema},
            "validators": [{"kind": "max_length", "max": 80, "field": "bdy"}],
            "policy": {"max_attempts": 1},
            "script": [{"final": {"body": "short"}}],
        },
        base_dir,
        final_tool="final_answer",
    )
    assert (record.status, record.termination) == ("error", "validator_error")
    assert record.steps[0].verdicts == [
        Verdict.errored("max_length", "field 'bdy' is not in the output")
    ]


async def test_field_passes_on_the_selected_part() -> None:
    # The whole document contains '*', the selected field does not.
    assert (await judge({"kind": "regex_absent", "pattern": r"\*", "field": "meta.lang"}, DOC)).ok


async def test_field_in_a_turn_with_structured_output(base_dir: Path) -> None:
    schema = {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}
    record, _ = await run(
        {
            "output": {"schema": schema},
            "validators": [{"kind": "max_length", "max": 8, "field": "body"}],
            "script": [{"final": {"body": "far too long"}}, {"final": {"body": "short"}}],
        },
        base_dir,
        final_tool="final_answer",
    )
    assert (record.status, record.output) == ("succeeded", {"body": "short"})
    assert record.steps[0].verdicts[0].reason == "12 characters > 8"


async def test_custom_feedback_replaces_the_default_and_keeps_the_reason() -> None:
    verdict = await judge(
        {"kind": "regex_absent", "pattern": "[*]", "feedback": "Plain text only."}, "**x**"
    )
    assert verdict == Verdict.failed("regex_absent", "found '*' at 0", "Plain text only.")


async def test_custom_feedback_is_what_the_model_gets(base_dir: Path) -> None:
    record, _ = await run(
        {
            "validators": [{"kind": "max_length", "max": 3, "feedback": "Shorter, please."}],
            "script": [{"text": "far too long"}, {"text": "ok"}],
        },
        base_dir,
    )
    assert record.status == "succeeded"
    assert [m.model_dump() for m in record.steps[0].feedback] == [
        {"role": "user", "content": "Shorter, please."}
    ]


def test_names_default_to_the_kind_and_duplicates_are_numbered(base_dir: Path) -> None:
    specs = SPECS.validate_python(
        [
            {"kind": "max_length", "max": 5},
            {"kind": "max_length", "max": 9},
            {"kind": "regex_absent", "pattern": "x"},
            {"kind": "max_length", "max": 1},
            {"kind": "python", "function": "checks.py:ok_none"},
            {"kind": "python", "function": "checks.py:ok_none"},
            {"kind": "non_empty", "name": "has text"},
            {"kind": "non_empty", "name": "has text"},
        ]
    )
    names = [v.name for v in compile_validators(specs, base_dir)]
    assert names == [
        "max_length",
        "max_length#2",
        "regex_absent",
        "max_length#3",
        "ok_none",
        "ok_none#2",
        "has text",
        "has text#2",
    ]


async def test_duplicate_names_reach_the_verdicts(base_dir: Path) -> None:
    record, events = await run(
        {
            "validators": [{"kind": "max_length", "max": 10}, {"kind": "max_length", "max": 2}],
            "policy": {"max_attempts": 1},
            "script": [{"text": "hello"}],
        },
        base_dir,
    )
    assert [(v.validator, v.ok) for v in record.steps[0].verdicts] == [
        ("max_length", True),
        ("max_length#2", False),
    ]
    [ready] = [e for e in events if isinstance(e, VerdictsReady)]
    assert ready.verdicts == record.steps[0].verdicts
    assert record.error is not None
    assert record.error.message == "no acceptable output after 1 attempt: max_length#2: " + (
        "5 characters > 2"
    )


# ---- python validators -----------------------------------------------------------------------


def py(function: str, /, **options: Any) -> dict[str, Any]:
    return {"kind": "python", "function": f"checks.py:{function}", **options}


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("ok_none", passed("ok_none")),
        ("ok_true", passed("ok_true")),
        (
            "fail_false",
            Verdict.failed(
                "fail_false", "returned False", "The answer failed the check fail_false."
            ),
        ),
        (
            "fail_str",
            Verdict.failed(
                "fail_str", "Say it in under 4 characters.", "Say it in under 4 characters."
            ),
        ),
        ("verdict", Verdict.failed("verdict", "too formal", "Be casual.")),
        # A verdict belongs to the validator that returned it, whatever name it carries.
        (
            "named_verdict",
            Verdict(validator="named_verdict", ok=True, status="pass", reason="casual"),
        ),
        ("raises", Verdict.errored("raises", "ValueError: bad input", location=None)),
        (
            "wrong_type",
            Verdict.errored("wrong_type", "returned int; expected None, bool, str or Verdict"),
        ),
        ("async_ok", Verdict.failed("async_ok", "Answer with 'fine'.", "Answer with 'fine'.")),
    ],
)
async def test_python_validator_returns(base_dir: Path, function: str, expected: Verdict) -> None:
    verdict = await judge(py(function), "hello", base_dir)
    assert verdict.model_copy(update={"location": None}) == expected  # location: tested below


def raises_at(base_dir: Path) -> SourceLocation:
    """Where ``checks.py:raises`` raises."""
    line = (
        textwrap.dedent(CHECKS_PY)
        .splitlines()
        .index('    raise ValueError("cannot judge\\nbad input")')
    )
    return SourceLocation(file=str((base_dir / "checks.py").resolve()), line=line + 1)


async def test_an_error_verdict_says_where_the_validator_raised(base_dir: Path) -> None:
    verdict = await judge(py("raises"), "hello", base_dir)
    assert verdict.location == raises_at(base_dir)
    assert "location" in verdict.model_dump()
    # A raise deeper down (a helper of the file) is placed at the file's own deepest line.
    (base_dir / "deep.py").write_text(
        "def helper(x):\n    return 1 / 0\n\n\n"
        "def check(output, ctx):\n    return helper(output)\n",
        encoding="utf-8",
    )
    deep = await judge({"kind": "python", "function": "deep.py:check"}, "x", base_dir)
    assert (deep.reason, deep.location) == (
        "ZeroDivisionError: division by zero",
        SourceLocation(file=str((base_dir / "deep.py").resolve()), line=2),
    )
    # No location: left out of the JSON, so records read and write as before.
    assert "location" not in Verdict.errored("x", "timed out").model_dump()


async def test_tolerant_compiling_turns_a_file_that_does_not_load_into_error_verdicts(
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.py").write_text("def check(output, ctx)\n    return True\n", encoding="utf-8")
    specs = SPECS.validate_python([{"kind": "python", "function": "bad.py:check"}])
    with pytest.raises(ScenarioError, match="syntax error"):
        compile_validators(specs, tmp_path, source="test.toml")
    [validator] = compile_validators(specs, tmp_path, source="test.toml", tolerant=True)
    verdict = await validator.judge("hi", ctx())
    assert verdict.status == "error"
    assert verdict.reason == validator.broken
    assert "bad.py:1: syntax error" in verdict.reason
    assert verdict.location == SourceLocation(file=str((tmp_path / "bad.py").resolve()), line=1)
    # Raised on import: the line of the file where it did.
    (tmp_path / "bad.py").write_text("import math\n\nX = math.sqrt(-1)\n", encoding="utf-8")
    forget(tmp_path / "bad.py")
    [validator] = compile_validators(specs, tmp_path, source="test.toml", tolerant=True)
    verdict = await validator.judge("hi", ctx())
    assert verdict.reason.endswith("bad.py raised on import: ValueError: math domain error")
    assert verdict.location == SourceLocation(file=str((tmp_path / "bad.py").resolve()), line=3)


async def test_async_python_validator_passes(base_dir: Path) -> None:
    assert await judge(py("async_ok"), "fine", base_dir) == passed("async_ok")


async def test_python_false_uses_the_configured_feedback(base_dir: Path) -> None:
    verdict = await judge(py("fail_false", feedback="No."), "x", base_dir)
    assert verdict == Verdict.failed("fail_false", "returned False", "No.")


async def test_python_validator_name_option(base_dir: Path) -> None:
    verdict = await judge(py("fail_false", name="tone check"), "x", base_dir)
    assert verdict.validator == "tone check"
    assert verdict.feedback == "The answer failed the check tone check."


async def test_python_validator_gets_the_field(base_dir: Path) -> None:
    verdict = await judge(py("sees_ctx", field="body"), {"body": "yo"}, base_dir)
    assert verdict.reason == "attempt=1 step=1 roles=user output='yo'"


async def test_python_validator_context_in_a_turn(base_dir: Path) -> None:
    record, _ = await run(
        {
            "validators": [py("sees_ctx")],
            "policy": {"max_attempts": 2},
            "script": [{"text": "one"}, {"text": "two"}],
        },
        base_dir,
    )
    assert [s.verdicts[0].reason for s in record.steps] == [
        "attempt=1 step=1 roles=user output='one'",
        "attempt=2 step=2 roles=user,assistant,user output='two'",
    ]


@pytest.mark.parametrize("function", ["async_sleeps", "sleeps"])
async def test_python_validator_timeout(base_dir: Path, function: str) -> None:
    verdict = await judge(py(function), "x", base_dir, timeout_s=0.05)
    assert verdict == Verdict.errored(function, "timed out after 0.05 s")


@pytest.mark.parametrize("tolerant", [False, True])
async def test_a_timed_out_validator_is_not_called_again_when_tolerant(
    base_dir: Path, tolerant: bool
) -> None:
    """Re-validation (tolerant) judges hundreds of outputs: each call that hangs would leave a
    thread running user code. A live turn (not tolerant) calls it on every attempt."""
    specs = SPECS.validate_python([py("sleeps")])
    [validator] = compile_validators(specs, base_dir, 0.05, source="t.toml", tolerant=tolerant)
    first = await validator.judge("x", ctx())
    assert first == Verdict.errored("sleeps", "timed out after 0.05 s")
    second = await validator.judge("x", ctx())
    assert second.status == "error"
    if tolerant:
        assert second.reason == "timed out after 0.05 s on an earlier output: not called again"
    else:
        assert second == first


async def test_policy_timeout_applies_in_a_turn(base_dir: Path) -> None:
    record, _ = await run(
        {
            "validators": [py("async_sleeps")],
            "policy": {"max_attempts": 1, "validator_timeout_s": 0.05},
            "script": [{"text": "x"}],
        },
        base_dir,
    )
    assert record.steps[0].verdicts == [Verdict.errored("async_sleeps", "timed out after 0.05 s")]
    assert (record.status, record.termination) == ("error", "validator_error")


async def test_error_verdict_rejects_but_adds_no_feedback(base_dir: Path) -> None:
    record, _ = await run(
        {
            "validators": [py("raises"), {"kind": "max_length", "max": 2}],
            "policy": {"max_attempts": 2},
            "script": [{"text": "abc"}, {"text": "ok"}],
        },
        base_dir,
    )
    first = record.steps[0]
    assert [(v.validator, v.status) for v in first.verdicts] == [
        ("raises", "error"),
        ("max_length", "fail"),
    ]
    # Only the failing verdict's feedback; the broken validator contributes nothing.
    assert [m.content for m in first.feedback] == [
        "Keep the answer to at most 2 characters (it had 3)."
    ]
    # Then only the broken validator objects: the turn ends as an error (on_validator_error
    # = "fail"), never a crash and never blamed on the model.
    assert (record.status, record.termination) == ("error", "validator_error")
    assert [s.status for s in record.steps] == ["failed_validation", "validator_error"]
    assert record.steps[1].verdicts[0] == Verdict.errored(
        "raises", "ValueError: bad input", raises_at(base_dir)
    )


async def test_only_error_verdicts_give_no_feedback(base_dir: Path) -> None:
    record, _ = await run(
        {
            "validators": [py("raises")],
            "policy": {"on_validator_error": "retry"},
            "script": [{"text": "a"}, {"text": "b"}, {"text": "c"}],
        },
        base_dir,
    )
    assert [s.feedback for s in record.steps] == [[], [], []]
    assert [s.status for s in record.steps] == ["validator_error"] * 3
    assert (record.status, record.termination) == ("error", "validator_error")


async def test_stop_ends_the_loop_with_validator_stop(base_dir: Path) -> None:
    record, _ = await run(
        {"validators": [py("stops")], "script": [{"text": "enough"}, {"text": "never"}]},
        base_dir,
    )
    assert (record.status, record.termination, record.output) == (
        "succeeded",
        "validator_stop",
        "enough",
    )
    assert len(record.steps) == 1


# ---- configuration errors ----------------------------------------------------------------------


def test_missing_python_function(base_dir: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        one(py("nope"), base_dir)
    assert str(info.value) == "test.toml: validators[0].function: checks.py has no function 'nope'"


def test_missing_python_file(tmp_path: Path) -> None:
    with pytest.raises(
        ScenarioError, match=r"^test\.toml: validators\[0\]\.function: file not found: .*gone\.py$"
    ):
        one({"kind": "python", "function": "gone.py:f"}, tmp_path)


def test_bad_reference_form(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        one({"kind": "python", "function": "checks.py", "name": "mine"}, tmp_path)
    assert str(info.value) == (
        "test.toml: validators[0].function: 'checks.py' is not of the form \"file.py:function\""
    )


@pytest.mark.parametrize("kind", ["regex_absent", "regex_present"])
def test_bad_regex(kind: str) -> None:
    with pytest.raises(ScenarioError) as info:
        one({"kind": kind, "pattern": "(unclosed"})
    assert str(info.value) == (
        "test.toml: validators[0].pattern: bad regular expression '(unclosed': missing ) "
        "at position 9"
    )


async def test_bad_validator_fails_before_the_run_starts(base_dir: Path) -> None:
    sc = scenario_from_dict(
        {**BASE, "validators": [py("nope")], "script": [{"text": "x"}]},
        source="test.toml",
        base_dir=base_dir,
    )
    events: list[Event] = []
    with pytest.raises(
        ScenarioError,
        match=r"^test\.toml: validators\[0\]\.function: checks\.py has no function .nope.$",
    ):
        await run_turn(sc, ScriptedProvider(sc.script), events.append)
    assert events == []


async def run(
    data: dict[str, Any], base_dir: Path, final_tool: str | None = None
) -> tuple[RunRecord, list[Event]]:
    sc = scenario_from_dict({**BASE, **data}, source="test.toml", base_dir=base_dir)
    provider = ScriptedProvider(
        sc.script,
        final_tool=final_tool,
        output_mode=sc.policy.output_mode if sc.output else None,
    )
    events: list[Event] = []
    record = await run_turn(sc, provider, events.append)
    assert all(s.status != "pending" for s in record.steps)
    return record, events
