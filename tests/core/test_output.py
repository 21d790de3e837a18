"""Structured output (B3) as pure functions: naming, planning, tool choice, reading candidates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.core.messages import ToolCall
from inspector.core.output import (
    NO_CANDIDATE,
    Candidate,
    OutputPlan,
    final_tool_name,
    forced_tool_choice,
    parse_json_text,
    plan_output,
    read_candidate,
    tool_choice,
)
from inspector.core.records import StepResponse, ToolSpec, Verdict
from inspector.core.scenario import OutputConfig

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
}
OUTPUT = OutputConfig.model_validate({"schema": SCHEMA})
PROMPTED_SUFFIX = (
    "\n\nRespond only with a JSON object that matches this JSON Schema, nothing else:\n"
    '{"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}'
)
PINNED = {"type": "function", "name": "final_answer"}


def plan(mode: str, user_tools: tuple[str, ...] = ()) -> OutputPlan:
    return plan_output(OUTPUT, mode, user_tools)


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


# ---- final_tool_name -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_tools", "expected"),
    [
        ([], "final_answer"),
        (["lookup_contact", "final_answer_1"], "final_answer"),
        (["final_answer"], "final_answer_1"),
        (["final_answer", "final_answer_1"], "final_answer_2"),
        (["final_answer_1", "final_answer", "final_answer_2"], "final_answer_3"),
    ],
)
def test_final_tool_name_is_suffixed_on_collision(user_tools: list[str], expected: str) -> None:
    assert final_tool_name(user_tools) == expected


def test_final_tool_name_takes_any_iterable_and_reserved_name() -> None:
    assert final_tool_name(iter(["submit"]), reserved="submit") == "submit_1"
    assert final_tool_name((n for n in ["other"]), reserved="submit") == "submit"


# ---- plan_output ---------------------------------------------------------------------------------


def test_plan_without_output_is_text() -> None:
    assert plan_output(None, "tool", ["final_answer"]) == OutputPlan(mode="text")
    assert OutputPlan(mode="text").final_tool_name is None


def test_plan_native_asks_for_a_json_schema_response_format() -> None:
    assert plan("native", ("final_answer",)) == OutputPlan(
        mode="native",
        schema=SCHEMA,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "final_answer", "schema": SCHEMA},
        },
    )


def test_plan_prompted_appends_the_schema_to_the_system_prompt() -> None:
    p = plan("prompted")
    assert p == OutputPlan(mode="prompted", schema=SCHEMA, system_suffix=PROMPTED_SUFFIX)
    assert p.system_suffix.endswith(json.dumps(SCHEMA))
    assert (p.final_tool, p.response_format) == (None, None)


def test_plan_tool_offers_a_final_answer_tool_with_the_schema_as_parameters() -> None:
    p = plan("tool", ("lookup_contact",))
    assert p == OutputPlan(
        mode="tool",
        schema=SCHEMA,
        final_tool=ToolSpec(
            name="final_answer", description="Give the final answer to the user.", parameters=SCHEMA
        ),
    )
    assert p.final_tool_name == "final_answer"
    assert (p.response_format, p.system_suffix) == (None, "")


def test_plan_tool_suffixes_the_name_on_collision() -> None:
    assert plan("tool", ("final_answer",)).final_tool_name == "final_answer_1"
    assert plan("tool", ("final_answer", "final_answer_1")).final_tool_name == "final_answer_2"


def test_plan_tool_uses_the_output_name_and_description() -> None:
    output = OutputConfig.model_validate(
        {"schema": SCHEMA, "name": "submit", "description": "Submit the SMS."}
    )
    p = plan_output(output, "tool", ["submit"])
    assert p.final_tool == ToolSpec(
        name="submit_1", description="Submit the SMS.", parameters=SCHEMA
    )
    native = plan_output(output, "native", [])
    assert native.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "submit", "schema": SCHEMA},
    }


# ---- tool_choice / forced_tool_choice ------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "has_user_tools", "expected"),
    [
        ("text", True, "auto"),
        ("text", False, None),
        ("native", True, "auto"),
        ("native", False, None),
        ("prompted", True, "auto"),
        ("prompted", False, None),
        ("tool", True, "required"),
        ("tool", False, PINNED),
    ],
)
def test_tool_choice_of_an_ordinary_step(mode: str, has_user_tools: bool, expected: Any) -> None:
    p = OutputPlan(mode="text") if mode == "text" else plan(mode)
    assert tool_choice(p, has_user_tools) == expected


def test_tool_choice_pins_the_suffixed_name() -> None:
    p = plan("tool", ("final_answer",))
    assert tool_choice(p, False) == {"type": "function", "name": "final_answer_1"}
    assert forced_tool_choice(p) == {"type": "function", "name": "final_answer_1"}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("text", "none"), ("native", "none"), ("prompted", "none"), ("tool", PINNED)],
)
def test_forced_tool_choice_of_the_last_step(mode: str, expected: Any) -> None:
    p = OutputPlan(mode="text") if mode == "text" else plan(mode)
    assert forced_tool_choice(p) == expected


# ---- parse_json_text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"body": "Hi"}',
        '  \n{"body": "Hi"}\n ',
        '```json\n{"body": "Hi"}\n```',
        '```JSON\n{"body": "Hi"}\n```',
        '```\n{"body": "Hi"}\n```',
        'Here you go:\n```json\n{"body": "Hi"}\n```\nAnything else?',
        'Sure! {"body": "Hi"} Hope that helps.',
    ],
    ids=["plain", "padded", "fence-json", "fence-JSON", "fence-bare", "fence-in-prose", "prose"],
)
def test_parse_json_text_tolerates_fences_and_prose(text: str) -> None:
    assert parse_json_text(text) == {"body": "Hi"}


def test_parse_json_text_keeps_non_object_json() -> None:
    assert parse_json_text("[1, 2]") == [1, 2]
    assert parse_json_text("42") == 42
    assert parse_json_text("{}") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello", "not JSON: Expecting value (line 1)"),
        ('{"body": "Hi"', "not JSON: Expecting ',' delimiter (line 1)"),
        ("```json\nnope\n```", "not JSON: Expecting value (line 1)"),
        ("", "not JSON: Expecting value (line 1)"),
    ],
)
def test_parse_json_text_invalid_raises_value_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^not JSON: ") as info:
        parse_json_text(text)
    assert str(info.value) == message


# ---- read_candidate: tool mode -------------------------------------------------------------------


def test_tool_mode_final_call_is_the_candidate() -> None:
    final = call("final_answer", {"body": "Moved to 3pm"})
    response = StepResponse(text="thinking aloud", tool_calls=[final])
    assert read_candidate(plan("tool"), response) == Candidate(
        present=True, value={"body": "Moved to 3pm"}, final_call=final
    )


def test_tool_mode_final_call_among_other_calls_is_the_candidate() -> None:
    final = call("final_answer", {"body": "x"}, "c2")
    response = StepResponse(tool_calls=[call("lookup_contact", {"name": "Sam"}), final])
    candidate = read_candidate(plan("tool", ("lookup_contact",)), response)
    assert candidate == Candidate(present=True, value={"body": "x"}, final_call=final)


def test_tool_mode_string_arguments_are_parsed_as_json() -> None:
    final = call("final_answer", '{"body": "Hi"}')
    candidate = read_candidate(plan("tool"), StepResponse(tool_calls=[final]))
    assert candidate == Candidate(present=True, value={"body": "Hi"}, final_call=final)


def test_tool_mode_non_json_string_arguments_fail_the_output_verdict() -> None:
    final = call("final_answer", "{not json")
    candidate = read_candidate(plan("tool"), StepResponse(tool_calls=[final]))
    reason = (
        "final_answer arguments are not JSON: Expecting property name enclosed in double quotes"
    )
    assert candidate == Candidate(
        present=True,
        value="{not json",
        problem=Verdict(
            validator="output", ok=False, status="fail", reason=reason, feedback=reason
        ),
        final_call=final,
    )


def test_tool_mode_other_tool_calls_only_are_no_candidate() -> None:
    response = StepResponse(text="Let me look.", tool_calls=[call("lookup_contact", {})])
    assert read_candidate(plan("tool", ("lookup_contact",)), response) is NO_CANDIDATE
    assert Candidate(present=False) == NO_CANDIDATE


def test_tool_mode_a_call_to_the_unsuffixed_name_is_not_the_final_answer() -> None:
    # With a user tool named final_answer, the synthetic tool is final_answer_1.
    response = StepResponse(tool_calls=[call("final_answer", {"body": "x"})])
    assert read_candidate(plan("tool", ("final_answer",)), response) is NO_CANDIDATE


def test_tool_mode_plain_text_fails_the_output_verdict_naming_the_tool() -> None:
    candidate = read_candidate(plan("tool"), StepResponse(text='{"body": "Hi"}'))
    assert candidate == Candidate(
        present=True,
        value='{"body": "Hi"}',
        problem=Verdict.failed(
            "output",
            "answered in plain text instead of calling the final_answer tool",
            "Do not answer in plain text: call the final_answer tool with your final answer.",
        ),
    )


def test_tool_mode_plain_text_names_the_suffixed_tool() -> None:
    candidate = read_candidate(plan("tool", ("final_answer",)), StepResponse(text="Hi"))
    assert candidate.problem is not None
    assert candidate.problem.reason == (
        "answered in plain text instead of calling the final_answer_1 tool"
    )


def test_tool_mode_schema_mismatch_fails_the_output_verdict() -> None:
    final = call("final_answer", {"body": 5})
    candidate = read_candidate(plan("tool"), StepResponse(tool_calls=[final]))
    assert candidate == Candidate(
        present=True,
        value={"body": 5},
        problem=Verdict.failed(
            "output",
            "does not match the output schema: body: 5 is not of type 'string'",
            "Your answer does not match the output schema: body: 5 is not of type 'string'. "
            "Answer again with output that matches the schema.",
        ),
        final_call=final,
    )


def test_tool_mode_non_object_json_string_is_checked_against_the_schema() -> None:
    final = call("final_answer", "[1, 2]")
    candidate = read_candidate(plan("tool"), StepResponse(tool_calls=[final]))
    assert candidate.value == [1, 2]
    assert candidate.problem is not None
    assert candidate.problem.reason == (
        "does not match the output schema: [1, 2] is not of type 'object'"
    )


# ---- read_candidate: native / prompted -----------------------------------------------------------


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_json_text_is_the_candidate(mode: str) -> None:
    response = StepResponse(text='```json\n{"body": "Hi"}\n```')
    assert read_candidate(plan(mode), response) == Candidate(present=True, value={"body": "Hi"})


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_invalid_json_text_fails_the_output_verdict(mode: str) -> None:
    candidate = read_candidate(plan(mode), StepResponse(text="Hi Sam, moved to 3pm."))
    assert candidate == Candidate(
        present=True,
        value="Hi Sam, moved to 3pm.",
        problem=Verdict.failed(
            "output",
            "not JSON: Expecting value (line 1)",
            "Your answer was not valid JSON. Answer with one JSON object only.",
        ),
    )


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_schema_mismatch_in_text_modes_fails_the_output_verdict(mode: str) -> None:
    candidate = read_candidate(plan(mode), StepResponse(text='{"text": "Hi"}'))
    assert candidate.present is True
    assert candidate.value == {"text": "Hi"}
    assert candidate.final_call is None
    assert candidate.problem == Verdict.failed(
        "output",
        "does not match the output schema: 'body' is a required property",
        "Your answer does not match the output schema: 'body' is a required property. "
        "Answer again with output that matches the schema.",
    )


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_tool_calls_in_text_modes_are_no_candidate(mode: str) -> None:
    response = StepResponse(text='{"body": "Hi"}', tool_calls=[call("lookup_contact", {})])
    assert read_candidate(plan(mode, ("lookup_contact",)), response) is NO_CANDIDATE


# ---- read_candidate: text mode -------------------------------------------------------------------


def test_text_mode_text_is_the_candidate_as_is() -> None:
    text = '  {"body": "Hi"} with **markdown**  '
    candidate = read_candidate(OutputPlan(mode="text"), StepResponse(text=text))
    assert candidate == Candidate(present=True, value=text)


def test_text_mode_tool_calls_are_no_candidate() -> None:
    response = StepResponse(text="Looking up.", tool_calls=[call("lookup_contact", {})])
    assert read_candidate(OutputPlan(mode="text"), response) is NO_CANDIDATE
