"""The pure policy functions behind B2 (what a step is sent) and B5 (which handler ends a turn)."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.core.handlers import choose_handler, failure_kind
from inspector.core.messages import user
from inspector.core.output import plan_output
from inspector.core.policy import Policy
from inspector.core.records import Forced, ToolSpec
from inspector.core.requests import build_request
from inspector.core.scenario import OutputConfig

SEARCH = ToolSpec(name="search")
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}


def request_for(index: int, *, tools: bool = True, mode: str | None = None, **policy: Any):
    output = OutputConfig(schema=SCHEMA) if mode else None
    plan = plan_output(output, mode or "tool", ["search"] if tools else [])
    offered = ([SEARCH] if tools else []) + ([plan.final_tool] if plan.final_tool else [])
    history = [user("hi")]
    return build_request(
        index=index,
        system="Be brief.",
        history=history,
        offered=offered,
        plan=plan,
        has_user_tools=tools,
        policy=Policy(**policy),
    )


def test_ordinary_step_is_not_forced() -> None:
    request, forced = request_for(1, max_steps=3)
    assert (request.system, request.tool_choice, forced) == ("Be brief.", "auto", None)


def test_last_step_disables_tools_and_appends_the_instruction() -> None:
    request, forced = request_for(3, max_steps=3, final_step_instruction="Answer now.")
    assert request.system == "Be brief.\n\nAnswer now."
    assert request.tool_choice == "none"
    assert request.tools == [SEARCH]  # still offered, just not allowed
    assert forced == Forced(tool_choice="none", instruction_appended=True)


def test_final_step_none_never_forces() -> None:
    request, forced = request_for(3, max_steps=3, final_step="none")
    assert (request.system, request.tool_choice, forced) == ("Be brief.", "auto", None)


def test_no_tools_offered_means_nothing_to_force() -> None:
    request, forced = request_for(3, tools=False, max_steps=3)
    assert (request.system, request.tool_choice, forced) == ("Be brief.", None, None)


def test_tool_mode_last_step_pins_the_final_answer_tool() -> None:
    pinned = {"type": "function", "name": "final_answer"}
    request, forced = request_for(2, mode="tool", max_steps=2)
    assert request.tool_choice == pinned
    assert forced == Forced(tool_choice=pinned, instruction_appended=True)
    earlier, marker = request_for(1, mode="tool", max_steps=2)
    assert (earlier.tool_choice, marker) == ("required", None)  # user tools: any tool, but a tool


def test_tool_mode_without_user_tools_marks_every_pinned_step() -> None:
    pinned = {"type": "function", "name": "final_answer"}
    request, forced = request_for(1, tools=False, mode="tool", max_steps=5)
    assert request.tool_choice == pinned
    assert forced == Forced(tool_choice=pinned, instruction_appended=False)


def test_native_mode_sends_the_response_format() -> None:
    request, _ = request_for(1, tools=False, mode="native")
    assert request.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": SCHEMA},
    }


def test_request_shares_message_objects_but_not_the_list() -> None:
    plan = plan_output(None, "tool", [])
    history = [user("hi")]
    request, _ = build_request(
        index=1,
        system="",
        history=history,
        offered=[],
        plan=plan,
        has_user_tools=False,
        policy=Policy(),
    )
    history.append(user("later"))
    assert len(request.messages) == 1  # a later append does not rewrite what was sent
    assert request.messages[0] is history[0]


@pytest.mark.parametrize(
    ("trigger", "policy", "handler"),
    [
        ("validator_exhausted", {}, "raise"),
        ("validator_exhausted", {"on_invalid_output": "fallback", "fallback": "x"}, "fallback"),
        ("empty_final", {"on_invalid_output": "fallback", "fallback": "x"}, "fallback"),
        ("step_cap", {"on_invalid_output": "fallback", "fallback": "x"}, "raise"),
        ("step_cap", {"on_step_cap": "fallback", "fallback": "x"}, "fallback"),
        ("refusal", {"on_invalid_output": "fallback", "fallback": "x"}, "raise"),
        ("refusal", {"on_refusal": "fallback", "fallback": "x"}, "fallback"),
        # a retried refusal that runs out of attempts is an exhausted retry
        (
            "refusal",
            {"on_refusal": "retry", "on_invalid_output": "fallback", "fallback": "x"},
            "fallback",
        ),
        ("refusal", {"on_refusal": "retry"}, "raise"),
    ],
)
def test_choose_handler(trigger: Any, policy: dict[str, Any], handler: str) -> None:
    assert choose_handler(trigger, Policy(**policy)) == handler


def test_failure_kinds() -> None:
    assert [
        failure_kind(t) for t in ("validator_exhausted", "step_cap", "refusal", "empty_final")
    ] == ["ValidatorExhausted", "StepCapReached", "Refusal", "EmptyFinal"]
