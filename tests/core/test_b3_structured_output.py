"""B3: structured output in each output mode — native response format, schema in the prompt, or a
synthetic final-answer tool whose call is forced, suffixed on collision, stripped from the
transcript and never executed as a user tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.events import Event, ToolExecuted, VerdictsReady
from inspector.core.loop import run_turn
from inspector.core.messages import ToolCall, assistant, tool_result, user
from inspector.core.records import Forced, RunRecord, ToolResult, ToolSpec, Verdict
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.providers.scripted import ScriptedProvider

SYSTEM = "You write SMS messages."
USER = "Tell Sam the meeting moved to 3pm."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
}
ANSWER = {"body": "Hi Sam, the meeting moved to 3pm."}
ANSWER_JSON = '{"body": "Hi Sam, the meeting moved to 3pm."}'
LOOKUP = {
    "name": "lookup_contact",
    "description": "Find a contact",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
    "result": "Sam: +1 555 0100",
}
FINAL_SPEC = ToolSpec(
    name="final_answer", description="Give the final answer to the user.", parameters=SCHEMA
)
PINNED = {"type": "function", "name": "final_answer"}
PROMPTED_SYSTEM = (
    "You write SMS messages.\n\n"
    "Respond only with a JSON object that matches this JSON Schema, nothing else:\n"
    '{"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}'
)
SCHEMA_FEEDBACK = (
    "Your answer does not match the output schema: body: 5 is not of type 'string'. "
    "Answer again with output that matches the schema."
)
PLAIN_TEXT_FEEDBACK = (
    "Do not answer in plain text: call the final_answer tool with your final answer."
)


def scenario_data(
    mode: str, script: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "name": "structured",
        "prompt": {"system": SYSTEM, "user": USER},
        "output": {"schema": SCHEMA},
        "tools": tools or [],
        "policy": {"output_mode": mode},
        "script": script,
    }


async def run(
    data: dict[str, Any], tmp_path: Path
) -> tuple[RunRecord, list[Event], ScriptedProvider]:
    scenario = scenario_from_dict(data, source="test.toml", base_dir=tmp_path)
    provider = build_provider(scenario)
    assert isinstance(provider, ScriptedProvider)
    events: list[Event] = []
    record = await run_turn(scenario, provider, events.append)
    return record, events, provider


def executed(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.index, e.result.name) for e in events if isinstance(e, ToolExecuted)]


def mentions(record: RunRecord, name: str) -> bool:
    """Whether any transcript message carries a call to, or a result of, the tool ``name``."""
    for m in record.transcript:
        if m.name == name or any(c.name == name for c in m.tool_calls or ()):
            return True
    return False


def counting_validator(tmp_path: Path) -> dict[str, Any]:
    """A python validator that logs every output it is called with to ``calls.jsonl``."""
    (tmp_path / "checks.py").write_text(
        "import json\n"
        "from pathlib import Path\n\n"
        "def count_calls(output, ctx):\n"
        "    with open(Path(__file__).with_name('calls.jsonl'), 'a') as f:\n"
        "        f.write(json.dumps(output) + '\\n')\n"
        "    return None\n",
        encoding="utf-8",
    )
    return {"kind": "python", "function": "checks.py:count_calls"}


def logged_calls(tmp_path: Path) -> list[Any]:
    log = tmp_path / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


# ---- native --------------------------------------------------------------------------------------


async def test_native_sends_the_response_format_and_parses_json_text(tmp_path: Path) -> None:
    record, _, _ = await run(scenario_data("native", [{"final": ANSWER}]), tmp_path)

    assert (record.status, record.termination, record.error) == ("succeeded", "stop", None)
    assert record.output == ANSWER
    [step] = record.steps
    assert step.request.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": SCHEMA},
    }
    assert (step.request.system, step.request.tools, step.request.tool_choice) == (SYSTEM, [], None)
    assert (step.response.text if step.response else None) == ANSWER_JSON
    assert (step.internal_tool, step.forced) == (False, None)
    assert record.transcript == [user(USER), assistant(ANSWER_JSON)]


async def test_native_accepts_code_fenced_json(tmp_path: Path) -> None:
    fenced = f"Here it is:\n```json\n{ANSWER_JSON}\n```"
    record, _, _ = await run(scenario_data("native", [{"text": fenced}]), tmp_path)
    assert record.status == "succeeded"
    assert record.output == ANSWER
    # The transcript keeps the output as JSON, not the model's fenced prose.
    assert record.transcript[-1] == assistant(ANSWER_JSON)


async def test_native_with_user_tools_keeps_tool_choice_auto(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}]},
        {"final": ANSWER},
    ]
    record, events, _ = await run(scenario_data("native", script, [LOOKUP]), tmp_path)
    assert (record.status, record.output) == ("succeeded", ANSWER)
    assert [s.request.tool_choice for s in record.steps] == ["auto", "auto"]
    assert [[t.name for t in s.request.tools] for s in record.steps] == [["lookup_contact"]] * 2
    assert all(s.request.response_format is not None for s in record.steps)
    assert executed(events) == [(1, "lookup_contact")]


# ---- prompted ------------------------------------------------------------------------------------


async def test_prompted_puts_the_schema_in_the_system_prompt(tmp_path: Path) -> None:
    fenced = f"```json\n{ANSWER_JSON}\n```"
    record, _, _ = await run(scenario_data("prompted", [{"text": fenced}]), tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    [step] = record.steps
    assert step.request.system == PROMPTED_SYSTEM
    assert step.request.system.startswith(SYSTEM)
    assert json.dumps(SCHEMA) in step.request.system
    assert (step.request.response_format, step.request.tools, step.request.tool_choice) == (
        None,
        [],
        None,
    )


async def test_prompted_invalid_json_is_retried_with_feedback(tmp_path: Path) -> None:
    script = [{"text": "Hi Sam, moved to 3pm."}, {"final": ANSWER}]
    record, _, _ = await run(scenario_data("prompted", script), tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    assert record.steps[0].verdicts == [
        Verdict.failed(
            "output",
            "not JSON: Expecting value (line 1)",
            "Your answer was not valid JSON. Answer with one JSON object only.",
        )
    ]
    assert record.steps[1].request.messages == [
        user(USER),
        assistant("Hi Sam, moved to 3pm."),
        user("Your answer was not valid JSON. Answer with one JSON object only."),
    ]
    assert record.steps[1].request.system == PROMPTED_SYSTEM


async def test_prompted_without_a_system_prompt_sends_only_the_schema_instruction(
    tmp_path: Path,
) -> None:
    data = scenario_data("prompted", [{"final": ANSWER}])
    data["prompt"]["system"] = ""
    record, _, _ = await run(data, tmp_path)
    assert record.steps[0].request.system == PROMPTED_SYSTEM.removeprefix(f"{SYSTEM}\n\n")


# ---- tool: what is offered and forced ------------------------------------------------------------


async def test_tool_mode_without_user_tools_pins_the_final_answer_tool(tmp_path: Path) -> None:
    record, events, _ = await run(scenario_data("tool", [{"final": ANSWER}]), tmp_path)

    assert (record.status, record.termination, record.output) == ("succeeded", "stop", ANSWER)
    [step] = record.steps
    assert step.request.tools == [FINAL_SPEC]
    assert step.request.tool_choice == PINNED
    assert step.forced == Forced(tool_choice=PINNED, instruction_appended=False)
    assert (step.request.system, step.request.response_format) == (SYSTEM, None)
    assert step.internal_tool is True
    assert step.response is not None
    assert step.response.tool_calls == [
        ToolCall(id="call_1_0", name="final_answer", arguments=ANSWER)
    ]
    assert step.tool_results == []
    assert executed(events) == []
    assert record.transcript == [user(USER), assistant(ANSWER_JSON)]


async def test_tool_mode_with_user_tools_requires_a_tool_call(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}, "id": "c1"}]},
        {"final": ANSWER},
    ]
    record, events, _ = await run(scenario_data("tool", script, [LOOKUP]), tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    for step in record.steps:
        assert step.request.tool_choice == "required"
        assert step.forced is None
        assert [t.name for t in step.request.tools] == ["lookup_contact", "final_answer"]
        assert step.request.tools[-1] == FINAL_SPEC
        assert step.request.tools[-1].parameters == SCHEMA
    assert [s.internal_tool for s in record.steps] == [False, True]
    assert executed(events) == [(1, "lookup_contact")]
    assert record.transcript == [
        user(USER),
        assistant(None, (ToolCall(id="c1", name="lookup_contact", arguments={"name": "Sam"}),)),
        tool_result("c1", "Sam: +1 555 0100", "lookup_contact"),
        assistant(ANSWER_JSON),
    ]
    assert not mentions(record, "final_answer")


async def test_tool_mode_name_is_suffixed_on_collision_with_a_user_tool(tmp_path: Path) -> None:
    user_final = {
        "name": "final_answer",
        "description": "The user's own tool that happens to be called final_answer",
        "result": "draft saved",
    }
    script = [
        {"tool_calls": [{"name": "final_answer", "id": "u1"}]},
        {"final": ANSWER},
    ]
    record, events, _ = await run(scenario_data("tool", script, [user_final]), tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    first, second = record.steps
    synthetic = FINAL_SPEC.model_copy(update={"name": "final_answer_1"})
    assert [t.name for t in first.request.tools] == ["final_answer", "final_answer_1"]
    assert first.request.tools[-1] == synthetic
    assert first.request.tool_choice == "required"
    # The user's final_answer is an ordinary tool: executed, its round trip kept.
    assert (first.internal_tool, first.status) == (False, "success")
    assert [(r.name, r.content) for r in first.tool_results] == [("final_answer", "draft saved")]
    assert second.internal_tool is True
    assert second.response is not None
    assert [c.name for c in second.response.tool_calls] == ["final_answer_1"]
    assert executed(events) == [(1, "final_answer")]
    assert record.transcript == [
        user(USER),
        assistant(None, (ToolCall(id="u1", name="final_answer", arguments={}),)),
        tool_result("u1", "draft saved", "final_answer"),
        assistant(ANSWER_JSON),
    ]
    assert not mentions(record, "final_answer_1")


async def test_tool_mode_collision_pins_the_suffixed_name(tmp_path: Path) -> None:
    data = scenario_data("tool", [{"final": ANSWER}], [{"name": "final_answer"}])
    data["policy"]["max_steps"] = 1
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.output) == ("succeeded", ANSWER)
    pinned = {"type": "function", "name": "final_answer_1"}
    assert record.steps[0].request.tool_choice == pinned
    assert record.steps[0].forced == Forced(tool_choice=pinned, instruction_appended=True)


# ---- tool: stripped from the transcript, never executed ------------------------------------------


async def test_tool_mode_failed_final_call_kept_in_history_but_not_in_transcript(
    tmp_path: Path,
) -> None:
    data = scenario_data("tool", [{"final": {"body": 5}}, {"final": ANSWER}])
    data["policy"]["clear_failed_attempts"] = False
    record, events, _ = await run(data, tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    assert [s.internal_tool for s in record.steps] == [True, True]
    assert [s.cleared for s in record.steps] == [False, False]
    # What the model saw: its final_answer call, paired with a result, then the feedback.
    assert record.steps[1].request.messages == [
        user(USER),
        assistant(None, (ToolCall(id="call_1_0", name="final_answer", arguments={"body": 5}),)),
        tool_result("call_1_0", "Rejected by validation.", "final_answer"),
        user(SCHEMA_FEEDBACK),
    ]
    # What the end user's conversation keeps: outputs as JSON text, no final_answer round trip.
    assert record.transcript == [
        user(USER),
        assistant('{"body": 5}'),
        user(SCHEMA_FEEDBACK),
        assistant(ANSWER_JSON),
    ]
    assert not mentions(record, "final_answer")
    assert executed(events) == []


async def test_tool_mode_tool_role_feedback_answers_the_final_call_outside_the_transcript(
    tmp_path: Path,
) -> None:
    data = scenario_data("tool", [{"final": {"body": 5}}, {"final": ANSWER}])
    data["policy"].update(clear_failed_attempts=False, feedback_role="tool")
    record, _, _ = await run(data, tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    assert record.steps[0].feedback == [tool_result("call_1_0", SCHEMA_FEEDBACK, "final_answer")]
    assert record.steps[1].request.messages == [
        user(USER),
        assistant(None, (ToolCall(id="call_1_0", name="final_answer", arguments={"body": 5}),)),
        tool_result("call_1_0", SCHEMA_FEEDBACK, "final_answer"),
    ]
    assert record.transcript == [user(USER), assistant('{"body": 5}'), assistant(ANSWER_JSON)]
    assert not mentions(record, "final_answer")


async def test_tool_mode_final_answer_next_to_a_user_call_ends_the_turn_without_running_it(
    tmp_path: Path,
) -> None:
    script = [
        {
            "tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}],
            "final": ANSWER,
        }
    ]
    record, events, _ = await run(scenario_data("tool", script, [LOOKUP]), tmp_path)
    assert (record.status, record.output) == ("succeeded", ANSWER)
    assert record.steps[0].internal_tool is True
    # Never run, but traced: the user call gets a result record naming why (no event).
    assert record.steps[0].tool_results == [
        ToolResult(
            tool_call_id="call_1_0",
            name="lookup_contact",
            content="",
            error="not executed: the final answer was given in the same reply",
        )
    ]
    assert executed(events) == []
    assert record.transcript == [user(USER), assistant(ANSWER_JSON)]


async def test_tool_mode_plain_text_reply_fails_then_a_retry_succeeds(tmp_path: Path) -> None:
    script = [{"text": "Hi Sam, the meeting moved to 3pm."}, {"final": ANSWER}]
    record, events, _ = await run(scenario_data("tool", script), tmp_path)

    assert (record.status, record.termination, record.output) == ("succeeded", "stop", ANSWER)
    first, second = record.steps
    assert (first.status, first.attempt, first.internal_tool) == ("failed_validation", 1, False)
    assert first.verdicts == [
        Verdict.failed(
            "output",
            "answered in plain text instead of calling the final_answer tool",
            PLAIN_TEXT_FEEDBACK,
        )
    ]
    assert first.feedback == [user(PLAIN_TEXT_FEEDBACK)]
    assert first.cleared is True
    assert (second.status, second.attempt, second.internal_tool) == ("success", 2, True)
    assert second.request.messages == [
        user(USER),
        assistant("Hi Sam, the meeting moved to 3pm."),
        user(PLAIN_TEXT_FEEDBACK),
    ]
    assert second.request.tool_choice == PINNED
    assert record.transcript == [user(USER), assistant(ANSWER_JSON)]
    verdict_events = [(e.index, e.verdicts) for e in events if isinstance(e, VerdictsReady)]
    assert [(i, [v.validator for v in vs]) for i, vs in verdict_events] == [
        (1, ["output"]),
        (2, []),
    ]


async def test_tool_mode_plain_text_without_retries_fails_clearly(tmp_path: Path) -> None:
    data = scenario_data("tool", [{"text": "Hi Sam."}])
    data["policy"]["max_attempts"] = 1
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.termination) == ("failed", "validator_exhausted")
    assert record.error is not None
    assert record.error.type == "ValidatorExhausted"
    assert record.error.message == (
        "no acceptable output after 1 attempt: "
        "output: answered in plain text instead of calling the final_answer tool"
    )


# ---- schema problems skip the user validators ----------------------------------------------------


@pytest.mark.parametrize("mode", ["native", "prompted", "tool"])
async def test_schema_invalid_output_is_an_output_verdict_and_skips_user_validators(
    mode: str, tmp_path: Path
) -> None:
    data = scenario_data(mode, [{"final": {"body": 5}}, {"final": ANSWER}])
    data["validators"] = [counting_validator(tmp_path)]
    record, _, _ = await run(data, tmp_path)

    assert (record.status, record.output) == ("succeeded", ANSWER)
    first, second = record.steps
    assert first.status == "failed_validation"
    assert first.verdicts == [
        Verdict.failed(
            "output",
            "does not match the output schema: body: 5 is not of type 'string'",
            SCHEMA_FEEDBACK,
        )
    ]
    assert first.feedback == [user(SCHEMA_FEEDBACK)]
    assert second.verdicts == [Verdict.passed("count_calls")]
    # The user validator ran once, on the schema-valid output only, with the parsed object.
    assert logged_calls(tmp_path) == [ANSWER]


async def test_exhausted_schema_failures_raise(tmp_path: Path) -> None:
    data = scenario_data("native", [{"final": {"body": 5}}, {"final": {}}])
    data["policy"]["max_attempts"] = 2
    data["validators"] = [counting_validator(tmp_path)]
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.termination) == ("failed", "validator_exhausted")
    assert record.output is None
    assert [[v.validator for v in s.verdicts] for s in record.steps] == [["output"], ["output"]]
    assert record.steps[1].verdicts[0].reason == (
        "does not match the output schema: 'body' is a required property"
    )
    assert logged_calls(tmp_path) == []


# ---- an empty structured output is not an empty reply --------------------------------------------


@pytest.mark.parametrize("mode", ["native", "prompted", "tool"])
async def test_empty_object_output_is_accepted(mode: str, tmp_path: Path) -> None:
    data = scenario_data(mode, [{"final": {}}])
    data["output"] = {"schema": {"type": "object", "properties": {"note": {"type": "string"}}}}
    data["validators"] = [counting_validator(tmp_path)]
    record, _, _ = await run(data, tmp_path)

    assert (record.status, record.termination, record.error) == ("succeeded", "stop", None)
    assert record.output == {}
    assert [s.status for s in record.steps] == ["success"]
    assert record.steps[0].internal_tool is (mode == "tool")
    assert record.transcript[-1] == assistant("{}")
    assert logged_calls(tmp_path) == [{}]


@pytest.mark.parametrize("mode", ["native", "prompted", "tool"])
async def test_an_empty_reply_is_not_an_empty_object(mode: str, tmp_path: Path) -> None:
    data = scenario_data(mode, [{"empty": True}])
    data["output"] = {"schema": {"type": "object"}}
    data["policy"]["on_empty_final"] = "finalize"
    record, _, _ = await run(data, tmp_path)

    assert (record.status, record.termination) == ("succeeded", "empty_final")
    assert record.output is None
    assert [s.status for s in record.steps] == ["empty"]
    assert record.steps[0].internal_tool is False
    assert record.transcript[-1] == assistant("")


async def test_an_empty_reply_without_retries_fails_as_empty_final(tmp_path: Path) -> None:
    data = scenario_data("tool", [{"empty": True}])
    data["policy"]["max_attempts"] = 1
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.termination) == ("failed", "empty_final")
    assert record.error is not None
    assert record.error.type == "EmptyFinal"
    assert record.output is None
    assert [s.status for s in record.steps] == ["empty"]
    assert [v.validator for v in record.steps[0].verdicts] == ["empty"]
