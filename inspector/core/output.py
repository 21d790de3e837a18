"""Structured output (B3): how a schema is asked for in each output mode, and how a candidate
output is read back from a response. Pure functions over records."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from inspector.core.messages import ToolCall
from inspector.core.records import StepResponse, ToolChoice, ToolSpec, Verdict
from inspector.core.scenario import OutputConfig, Scenario
from inspector.core.schema import schema_errors

OUTPUT_VALIDATOR = "output"  # the name of the verdict for "not JSON / does not match the schema"
Mode = Literal["text", "native", "tool", "prompted"]


def final_tool_name(user_tool_names: Iterable[str], reserved: str = "final_answer") -> str:
    """The reserved name, suffixed ``_1``, ``_2``... on collision with a user tool."""
    taken = set(user_tool_names)
    if reserved not in taken:
        return reserved
    n = 1
    while f"{reserved}_{n}" in taken:
        n += 1
    return f"{reserved}_{n}"


def pinned(tool_name: str) -> dict[str, Any]:
    return {"type": "function", "name": tool_name}


@dataclass(frozen=True)
class OutputPlan:
    mode: Mode
    schema: dict[str, Any] | None = None
    final_tool: ToolSpec | None = None
    response_format: dict[str, Any] | None = None
    system_suffix: str = ""

    @property
    def final_tool_name(self) -> str | None:
        return self.final_tool.name if self.final_tool else None


def plan_output(
    output: OutputConfig | None, mode: str, user_tool_names: Iterable[str]
) -> OutputPlan:
    if output is None:
        return OutputPlan(mode="text")
    schema = output.output_schema
    if mode == "native":
        fmt = {"type": "json_schema", "json_schema": {"name": output.name, "schema": schema}}
        return OutputPlan(mode="native", schema=schema, response_format=fmt)
    if mode == "prompted":
        suffix = (
            "\n\nRespond only with a JSON object that matches this JSON Schema, nothing else:\n"
            + json.dumps(schema, ensure_ascii=False)
        )
        return OutputPlan(mode="prompted", schema=schema, system_suffix=suffix)
    name = final_tool_name(user_tool_names, output.name)
    tool = ToolSpec(name=name, description=output.description, parameters=schema)
    return OutputPlan(mode="tool", schema=schema, final_tool=tool)


def scenario_plan(scenario: Scenario) -> OutputPlan:
    """The scenario's output plan — the one derivation the loop and the provider both use, so
    they always agree on the final-answer tool's name."""
    names = (t.name for t in scenario.tools)
    return plan_output(scenario.output, scenario.policy.output_mode, names)


def tool_choice(plan: OutputPlan, has_user_tools: bool) -> ToolChoice | None:
    """The tool_choice of an ordinary step: B3 forces the final-answer tool in tool mode."""
    if plan.final_tool is not None:
        return "required" if has_user_tools else pinned(plan.final_tool.name)
    return "auto" if has_user_tools else None


def forced_tool_choice(plan: OutputPlan) -> ToolChoice:
    """B2 on the last allowed step: tools off, or only the final-answer tool in tool mode."""
    return pinned(plan.final_tool.name) if plan.final_tool is not None else "none"


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_text(text: str) -> Any:
    """JSON from model text, tolerating code fences and prose around one object.
    Raises ``ValueError`` with a readable reason."""
    stripped = text.strip()
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(stripped)]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    first_error: json.JSONDecodeError | None = None
    for c in candidates:
        try:
            return json.loads(c)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise ValueError(f"not JSON: {first_error.msg} (line {first_error.lineno})")


@dataclass(frozen=True)
class Candidate:
    """What a response offers as the turn's final output.

    ``present`` is False for a work step (tool calls only). ``problem`` is a failed verdict when the
    candidate cannot be an output at all (not JSON, schema mismatch, plain text in tool mode).
    """

    present: bool
    value: Any = None
    problem: Verdict | None = None
    final_call: ToolCall | None = None


NO_CANDIDATE = Candidate(present=False)


def _check_schema(plan: OutputPlan, value: Any, final_call: ToolCall | None = None) -> Candidate:
    assert plan.schema is not None
    problems = schema_errors(plan.schema, value)
    if not problems:
        return Candidate(present=True, value=value, final_call=final_call)
    reason = f"does not match the output schema: {problems[0]}"
    feedback = f"Your answer {reason}. Answer again with output that matches the schema."
    verdict = Verdict.failed(OUTPUT_VALIDATOR, reason, feedback)
    return Candidate(present=True, value=value, problem=verdict, final_call=final_call)


def read_candidate(plan: OutputPlan, response: StepResponse) -> Candidate:
    """Assumes the response is neither empty nor a refusal (the loop checks those first)."""
    if plan.final_tool is not None:
        name = plan.final_tool.name
        call = next((c for c in response.tool_calls if c.name == name), None)
        if call is not None:
            args = call.arguments
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError as exc:
                    reason = f"{name} arguments are not JSON: {exc.msg}"
                    return Candidate(
                        present=True,
                        value=call.arguments,
                        problem=Verdict.failed(OUTPUT_VALIDATOR, reason, reason),
                        final_call=call,
                    )
            return _check_schema(plan, args, call)
        if response.tool_calls:
            return NO_CANDIDATE
        reason = f"answered in plain text instead of calling the {name} tool"
        feedback = f"Do not answer in plain text: call the {name} tool with your final answer."
        return Candidate(
            present=True,
            value=response.text,
            problem=Verdict.failed(OUTPUT_VALIDATOR, reason, feedback),
        )
    if response.tool_calls:
        return NO_CANDIDATE
    if plan.schema is None:
        return Candidate(present=True, value=response.text)
    try:
        value = parse_json_text(response.text)
    except ValueError as exc:
        reason = str(exc)
        feedback = "Your answer was not valid JSON. Answer with one JSON object only."
        verdict = Verdict.failed(OUTPUT_VALIDATOR, reason, feedback)
        return Candidate(present=True, value=response.text, problem=verdict)
    return _check_schema(plan, value)


def output_as_text(value: Any) -> str:
    """The assistant message content that stands for an output in the transcript."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
