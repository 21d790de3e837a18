"""B2: the step cap counts every model call; the last allowed step disables tools and appends a
final-answer instruction to the system prompt (never replacing it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.core.events import Event, FallbackUsed, StepStarted, ToolExecuted
from inspector.core.loop import run_turn
from inspector.core.messages import Message, ToolCall, assistant, tool_result, user
from inspector.core.policy import DEFAULT_FINAL_STEP_INSTRUCTION, DEFAULT_FINAL_TOOL_INSTRUCTION
from inspector.core.records import Forced, RunError, RunRecord, ToolResult
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.providers.scripted import ScriptedProvider

SYSTEM = "You are a research assistant."
USER = "Find the release date."
FORCED_SYSTEM = f"{SYSTEM}\n\n{DEFAULT_FINAL_STEP_INSTRUCTION}"
SEARCH = {
    "name": "search",
    "description": "Search the web",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    "result": "nothing new",
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
PINNED = {"type": "function", "name": "final_answer"}
FORCED_TEXT = Forced(tool_choice="none", instruction_appended=True)


def not_run_at_cap(call_id: str) -> ToolResult:
    return ToolResult(
        tool_call_id=call_id, name="search", content="", error="not executed: step cap reached"
    )


def search(q: str, call_id: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"tool_calls": [{"name": "search", "arguments": {"q": q}}]}
    if call_id:
        entry["tool_calls"][0]["id"] = call_id
    return entry


def scenario_data(script: list[dict[str, Any]], **policy: Any) -> dict[str, Any]:
    return {
        "name": "step-cap",
        "prompt": {"system": SYSTEM, "user": USER},
        "tools": [SEARCH],
        "policy": policy,
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


# ---- counting ------------------------------------------------------------------------------------


async def test_max_steps_counts_every_model_call_retries_included(tmp_path: Path) -> None:
    data = scenario_data(
        [search("a"), {"text": "not yet"}, search("b"), {"text": "OK: 2024-05-01"}],
        max_steps=4,
        max_attempts=5,
    )
    data["validators"] = [{"kind": "regex_present", "pattern": "^OK", "feedback": "Start with OK."}]
    record, _, provider = await run(data, tmp_path)

    assert (record.status, record.termination, record.error) == ("succeeded", "stop", None)
    assert record.output == "OK: 2024-05-01"
    assert [(s.index, s.attempt, s.status) for s in record.steps] == [
        (1, 1, "success"),
        (2, 1, "failed_validation"),
        (3, 2, "success"),
        (4, 2, "success"),
    ]
    assert record.budgets.model_dump() == {
        "attempts_used": 2,
        "max_attempts": 5,
        "steps_used": 4,
        "max_steps": 4,
        "transport_retries": 0,
    }
    assert provider.calls == 4
    # Only the 4th model call is the last allowed one, although it is only the 2nd attempt.
    assert [s.forced for s in record.steps] == [None, None, None, FORCED_TEXT]


async def test_validation_retries_are_cut_short_by_the_step_cap(tmp_path: Path) -> None:
    data = scenario_data(
        [{"text": f"draft {i}"} for i in range(1, 6)], max_steps=3, max_attempts=10
    )
    data["validators"] = [{"kind": "regex_present", "pattern": "^OK", "feedback": "Start with OK."}]
    record, _, provider = await run(data, tmp_path)

    assert (record.status, record.termination) == ("failed", "step_cap")
    assert record.error == RunError(
        type="StepCapReached",
        message="step cap reached: 3 model calls without an accepted answer",
    )
    assert record.output is None
    assert provider.calls == 3
    assert [(s.index, s.attempt, s.status) for s in record.steps] == [
        (1, 1, "failed_validation"),
        (2, 2, "failed_validation"),
        (3, 3, "failed_validation"),
    ]
    assert (record.budgets.attempts_used, record.budgets.steps_used) == (3, 3)
    feedback = [user("Start with OK.")]
    assert [s.feedback for s in record.steps] == [feedback, feedback, []]
    # The drafts a retry replaced are cleared; the one the turn ended on stays.
    assert [s.cleared for s in record.steps] == [True, True, False]
    assert record.transcript == [user(USER), assistant("draft 3")]
    assert [s.forced for s in record.steps] == [None, None, FORCED_TEXT]
    # The forced step still saw the accumulated feedback.
    assert record.steps[2].request.messages == [
        user(USER),
        assistant("draft 1"),
        user("Start with OK."),
        assistant("draft 2"),
        user("Start with OK."),
    ]


async def test_max_steps_one_forces_the_only_step(tmp_path: Path) -> None:
    record, _, _ = await run(scenario_data([{"text": "2024-05-01"}], max_steps=1), tmp_path)
    assert (record.status, record.output) == ("succeeded", "2024-05-01")
    [step] = record.steps
    assert (step.request.tool_choice, step.request.system) == ("none", FORCED_SYSTEM)
    assert step.forced == FORCED_TEXT


# ---- the forced final step -----------------------------------------------------------------------


async def test_last_allowed_step_disables_tools_and_appends_the_instruction(
    tmp_path: Path,
) -> None:
    script = [search("a", "c1"), search("b", "c2"), {"text": "It shipped on 2024-05-01."}]
    record, events, _ = await run(scenario_data(script, max_steps=3), tmp_path)

    assert (record.status, record.termination) == ("succeeded", "stop")
    assert record.output == "It shipped on 2024-05-01."
    first, second, last = record.steps
    for step in (first, second):
        assert step.request.tool_choice == "auto"
        assert step.request.system == SYSTEM
        assert step.forced is None
    assert last.request.tool_choice == "none"
    assert last.request.system == (
        "You are a research assistant.\n\n"
        "Tools are disabled now. Answer the user with what you have."
    )
    assert last.request.system.startswith(SYSTEM)
    assert last.forced is not None
    assert last.forced.model_dump() == {"tool_choice": "none", "instruction_appended": True}
    # The tools stay declared (the history refers to them); tool_choice turns them off.
    assert [t.name for t in last.request.tools] == ["search"]
    assert last.request.messages == [
        user(USER),
        assistant(None, (ToolCall(id="c1", name="search", arguments={"q": "a"}),)),
        tool_result("c1", "nothing new", "search"),
        assistant(None, (ToolCall(id="c2", name="search", arguments={"q": "b"}),)),
        tool_result("c2", "nothing new", "search"),
    ]
    started = [(e.index, e.forced) for e in events if isinstance(e, StepStarted)]
    assert started == [(1, None), (2, None), (3, FORCED_TEXT)]


async def test_custom_final_step_instruction_is_appended(tmp_path: Path) -> None:
    data = scenario_data(
        [search("a"), {"text": "Done."}], max_steps=2, final_step_instruction="Wrap up now."
    )
    record, _, _ = await run(data, tmp_path)
    assert record.status == "succeeded"
    assert [s.request.system for s in record.steps] == [
        SYSTEM,
        "You are a research assistant.\n\nWrap up now.",
    ]


async def test_instruction_alone_when_there_is_no_system_prompt(tmp_path: Path) -> None:
    data = scenario_data([search("a"), {"text": "Done."}], max_steps=2)
    data["prompt"]["system"] = ""
    record, _, _ = await run(data, tmp_path)
    assert [s.request.system for s in record.steps] == ["", DEFAULT_FINAL_STEP_INSTRUCTION]


async def test_final_step_none_never_forces(tmp_path: Path) -> None:
    script = [search("a"), search("b"), {"text": "Done."}]
    record, _, _ = await run(scenario_data(script, max_steps=3, final_step="none"), tmp_path)
    assert (record.status, record.output) == ("succeeded", "Done.")
    assert [s.request.tool_choice for s in record.steps] == ["auto", "auto", "auto"]
    assert [s.request.system for s in record.steps] == [SYSTEM, SYSTEM, SYSTEM]
    assert [s.forced for s in record.steps] == [None, None, None]


async def test_final_step_none_lets_a_tool_heavy_turn_run_into_the_cap(tmp_path: Path) -> None:
    script = [search("a"), search("b"), search("c")]
    record, events, _ = await run(scenario_data(script, max_steps=2, final_step="none"), tmp_path)
    assert (record.status, record.termination) == ("failed", "step_cap")
    assert record.error == RunError(
        type="StepCapReached",
        message="step cap reached: 2 model calls without an accepted answer",
    )
    assert [s.forced for s in record.steps] == [None, None]
    # The last allowed step's tool call is not executed: no model could ever see its result.
    # It leaves a trace in the step (but no ToolExecuted event).
    assert executed(events) == [(1, "search")]
    assert record.steps[1].tool_results == [not_run_at_cap("call_2_0")]
    assert record.transcript[-1].role == "tool"  # no answer: the turn just stopped


async def test_no_tools_offered_means_no_forcing(tmp_path: Path) -> None:
    data = scenario_data([{"text": "draft 1"}, {"text": "draft 2"}], max_steps=2)
    data["tools"] = []
    data["validators"] = [{"kind": "regex_present", "pattern": "^OK"}]
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.termination) == ("failed", "step_cap")
    assert [s.request.tool_choice for s in record.steps] == [None, None]
    assert [s.request.tools for s in record.steps] == [[], []]
    assert [s.request.system for s in record.steps] == [SYSTEM, SYSTEM]
    assert [s.forced for s in record.steps] == [None, None]


async def test_tool_heavy_turn_ends_with_a_text_answer_on_the_forced_step(
    tmp_path: Path,
) -> None:
    script = [search(f"q{i}", f"c{i}") for i in range(1, 5)] + [{"text": "Released 2024-05-01."}]
    record, events, _ = await run(scenario_data(script, max_steps=5), tmp_path)

    assert (record.status, record.termination, record.error) == ("succeeded", "stop", None)
    assert record.output == "Released 2024-05-01."
    assert [s.status for s in record.steps] == ["success"] * 5
    assert [s.request.tool_choice for s in record.steps] == ["auto"] * 4 + ["none"]
    assert executed(events) == [(1, "search"), (2, "search"), (3, "search"), (4, "search")]
    assert len(record.transcript) == 1 + 4 * 2 + 1
    assert record.transcript[-1] == assistant("Released 2024-05-01.")
    assert record.steps[-1].request.messages == record.transcript[:-1]


async def test_empty_reply_on_the_forced_step_hits_the_cap(tmp_path: Path) -> None:
    record, _, _ = await run(scenario_data([search("a"), {"empty": True}], max_steps=2), tmp_path)
    assert (record.status, record.termination) == ("failed", "step_cap")
    assert record.error is not None
    assert record.error.type == "StepCapReached"
    assert [s.status for s in record.steps] == ["success", "empty"]
    assert record.steps[1].forced == FORCED_TEXT


# ---- tool output mode ----------------------------------------------------------------------------

# In tool output mode tools are not disabled on the last step: the final-answer tool is pinned and
# the final-tool instruction, naming that tool, is appended instead.
FORCED_TOOL_SYSTEM = (
    f"{SYSTEM}\n\n{DEFAULT_FINAL_TOOL_INSTRUCTION.replace('{tool}', 'final_answer')}"
)
FORCED_TOOL_INSTRUCTION = "This is the last step: call the final_answer tool now with your answer."


async def test_tool_output_mode_pins_the_final_answer_tool_on_the_last_step(
    tmp_path: Path,
) -> None:
    data = scenario_data([search("a"), {"final": {"answer": "2024-05-01"}}], max_steps=2)
    data["output"] = {"schema": SCHEMA}
    record, events, _ = await run(data, tmp_path)

    assert (record.status, record.output) == ("succeeded", {"answer": "2024-05-01"})
    first, last = record.steps
    assert (first.request.tool_choice, first.forced, first.request.system) == (
        "required",
        None,
        SYSTEM,
    )
    assert last.request.tool_choice == PINNED
    assert last.request.system == FORCED_TOOL_SYSTEM
    assert last.request.system.endswith(FORCED_TOOL_INSTRUCTION)
    assert last.forced == Forced(tool_choice=PINNED, instruction_appended=True)
    assert [t.name for t in last.request.tools] == ["search", "final_answer"]
    assert last.internal_tool is True
    assert executed(events) == [(1, "search")]


async def test_tool_output_mode_without_user_tools_pins_every_step(tmp_path: Path) -> None:
    data = scenario_data([{"text": "2024-05-01"}, {"final": {"answer": "2024-05-01"}}], max_steps=2)
    data["tools"] = []
    data["output"] = {"schema": SCHEMA}
    record, _, _ = await run(data, tmp_path)

    assert (record.status, record.output) == ("succeeded", {"answer": "2024-05-01"})
    assert [s.request.tool_choice for s in record.steps] == [PINNED, PINNED]
    assert [s.forced for s in record.steps] == [
        Forced(tool_choice=PINNED, instruction_appended=False),
        Forced(tool_choice=PINNED, instruction_appended=True),
    ]
    assert [s.request.system for s in record.steps] == [SYSTEM, FORCED_TOOL_SYSTEM]


async def test_tool_output_mode_plain_text_on_the_forced_step_hits_the_cap(
    tmp_path: Path,
) -> None:
    data = scenario_data([search("a"), {"text": "2024-05-01"}], max_steps=2, max_attempts=3)
    data["output"] = {"schema": SCHEMA}
    record, _, _ = await run(data, tmp_path)

    assert (record.status, record.termination) == ("failed", "step_cap")
    assert record.error is not None
    assert record.error.type == "StepCapReached"
    last = record.steps[1]
    assert (last.status, last.internal_tool, last.feedback) == ("failed_validation", False, [])
    assert [(v.validator, v.reason) for v in last.verdicts] == [
        ("output", "answered in plain text instead of calling the final_answer tool")
    ]


# ---- a model that ignores the forced step --------------------------------------------------------


async def test_tool_calls_on_the_forced_step_end_in_step_cap(tmp_path: Path) -> None:
    script = [search("a"), search("b"), {"text": "never reached"}]
    record, _, provider = await run(scenario_data(script, max_steps=2), tmp_path)

    assert (record.status, record.termination) == ("failed", "step_cap")
    assert record.error is not None
    assert record.error.type == "StepCapReached"
    assert record.output is None
    assert provider.calls == 2
    assert record.budgets.steps_used == 2
    assert record.steps[1].forced == FORCED_TEXT
    assert record.steps[1].request.tool_choice == "none"


async def test_step_cap_message_says_the_model_ignored_tool_choice_none(tmp_path: Path) -> None:
    record, _, _ = await run(scenario_data([search("a"), search("b")], max_steps=2), tmp_path)
    assert record.error is not None
    assert "tool_choice 'none'" in record.error.message


async def test_tools_are_not_executed_on_the_forced_step(tmp_path: Path) -> None:
    record, events, _ = await run(scenario_data([search("a"), search("b")], max_steps=2), tmp_path)
    assert executed(events) == [(1, "search")]
    assert [s.tool_results for s in record.steps] == [
        [ToolResult(tool_call_id="call_1_0", name="search", content="nothing new")],
        [not_run_at_cap("call_2_0")],
    ]


# ---- on_step_cap ---------------------------------------------------------------------------------


async def test_on_step_cap_fallback(tmp_path: Path) -> None:
    data = scenario_data(
        [search("a"), search("b")],
        max_steps=2,
        on_step_cap="fallback",
        fallback="Sorry, I could not finish the search.",
    )
    record, events, _ = await run(data, tmp_path)

    assert (record.status, record.termination) == ("fallback", "fallback")
    assert record.fallback_trigger == "step_cap"
    assert record.output == "Sorry, I could not finish the search."
    assert record.error is None
    used = [e for e in events if isinstance(e, FallbackUsed)]
    assert [(e.value, e.trigger) for e in used] == [
        ("Sorry, I could not finish the search.", "step_cap")
    ]
    # fallback_in_history is off: the transcript keeps no assistant answer.
    assert all(m.role != "assistant" or m.tool_calls for m in record.transcript)


async def test_on_step_cap_fallback_in_history(tmp_path: Path) -> None:
    data = scenario_data(
        [search("a"), search("b")],
        max_steps=2,
        on_step_cap="fallback",
        fallback="Sorry, I could not finish the search.",
        fallback_in_history=True,
    )
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.fallback_trigger) == ("fallback", "step_cap")
    assert record.transcript[-1] == Message(
        role="assistant", content="Sorry, I could not finish the search."
    )


async def test_on_step_cap_fallback_after_retries_cut_short(tmp_path: Path) -> None:
    data = scenario_data(
        [{"text": "draft 1"}, {"text": "draft 2"}],
        max_steps=2,
        max_attempts=5,
        on_step_cap="fallback",
        fallback="fallback answer",
    )
    data["validators"] = [{"kind": "regex_present", "pattern": "^OK"}]
    record, _, _ = await run(data, tmp_path)
    assert (record.status, record.termination, record.fallback_trigger) == (
        "fallback",
        "fallback",
        "step_cap",
    )
    assert record.output == "fallback answer"
    assert [s.status for s in record.steps] == ["failed_validation", "failed_validation"]
