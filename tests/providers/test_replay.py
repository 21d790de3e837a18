"""Replay: answers from the recording where the request is identical, live (or a divergence)
elsewhere; side-effect tools never run twice.

Every policy knob that changes what the model is sent gets its own case: the replay reuses the
recorded prefix, diverges exactly at the step the knob first changes, says why in one line when
offline, and — continued live on the scripted model — ends exactly like a fresh run under the
new policy.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ReplayDivergence
from inspector.core.events import Event, RunFinished, StepStarted
from inspector.core.fingerprint import ModelSettings
from inspector.core.loop import Turn, run_turn
from inspector.core.messages import ToolCall
from inspector.core.provider import Completed, Provider, ProviderChunk, TextChunk
from inspector.core.recording import RecordedTools
from inspector.core.records import RunRecord, Step, StepRequest, StepResponse
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.providers import replay
from inspector.providers.factory import build_provider
from inspector.providers.replay import ReplayProvider, replay_turn
from inspector.providers.scripted import ScriptedProvider
from inspector.resources import demo_names, resolve_scenario

SYSTEM = "You write SMS messages."
USER = "Tell Sam the meeting moved to 3pm."
BOLD = "**Hi Sam**, the meeting moved to 3pm."
LONG = "Hi Sam! Quick heads-up from the team: the meeting has moved to 3pm today, same room."
PLAIN = "Hi Sam, the meeting moved to 3pm."
LOOKUP = {
    "name": "lookup_contact",
    "description": "Find a contact",
    "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
    "result": "Sam: +1 555 0100",
}
SMS: dict[str, Any] = {
    "name": "sms",
    "prompt": {"system": SYSTEM, "user": USER},
    "tools": [LOOKUP],
    "validators": [
        {"kind": "regex_absent", "name": "no_markdown", "pattern": r"[*_]", "feedback": "No md."},
        {"kind": "max_length", "max": 60, "feedback": "Shorter."},
    ],
    "policy": {"max_attempts": 3, "max_steps": 8},
    "script": [
        {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}]},
        {"text": BOLD},
        {"text": LONG},
        {"text": PLAIN},
    ],
}
SCHEMA = {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}
STRUCTURED: dict[str, Any] = {
    "name": "structured",
    "prompt": {"system": SYSTEM, "user": USER},
    "output": {"schema": SCHEMA},
    "validators": [{"kind": "max_length", "field": "body", "max": 20}],
    "policy": {"max_attempts": 3, "max_steps": 2},
    "script": [{"final": {"body": LONG}}, {"final": {"body": "Meeting at 3pm."}}],
}


def build(
    data: dict[str, Any], overrides: list[str] | None = None, base: Path = Path(".")
) -> Scenario:
    return scenario_from_dict(data, source="test.toml", base_dir=base, overrides=overrides)


def record_of(scenario: Scenario) -> RunRecord:
    return asyncio.run(run_turn(scenario, build_provider(scenario)))


def run(turn: Turn) -> RunRecord:
    return asyncio.run(turn.run())


def same(step: Step) -> dict[str, Any]:
    """What a replay must reproduce of a step (timings are the machine's, not the turn's)."""
    return step.model_dump(mode="json", exclude={"latency_ms", "ttft_ms"})


def asked_and_answered(step: Step) -> dict[str, Any]:
    """What a replayed prefix shares with the recording under another policy (the feedback a
    step injects, and whether it is cleared, follow the policy)."""
    return step.model_dump(
        mode="json", include={"index", "attempt", "status", "request", "response", "verdicts"}
    )


def outcome(record: RunRecord) -> dict[str, Any]:
    return record.model_dump(
        mode="json",
        include={"status", "termination", "output", "error", "transcript", "budgets", "usage"},
    )


class FakeLive:
    """Any live provider: answers texts in order and keeps the requests it got."""

    name = "fake"

    def __init__(self, *answers: StepResponse) -> None:
        self.answers = list(answers)
        self.requests: list[StepRequest] = []

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        self.requests.append(request)
        response = self.answers.pop(0)
        if response.text:
            yield TextChunk(text=response.text)
        yield Completed(response=response)


def test_public_surface() -> None:
    assert replay.__all__ == ["ANSWERING_STATUSES", "ReplayProvider", "replay_turn"]
    provider: Provider = ReplayProvider(
        record_of(build(SMS)), recorded_settings=_settings(), settings=_settings()
    )
    assert provider.name == "replay"


def _settings() -> ModelSettings:
    return ModelSettings(name="demo")


# ---- same policy: the run again, exactly --------------------------------------------------------


# The offline demos of the five behaviours (DESIGN §3).
SCRIPTED_DEMOS = (
    "retry-feedback", "step-cap", "final-answer-tool", "empty-final", "invalid-output-fallback"
)  # fmt: skip


@pytest.mark.parametrize("demo", SCRIPTED_DEMOS)
def test_same_policy_offline_replay_reproduces_every_demo_exactly(demo: str) -> None:
    assert demo in demo_names()
    scenario = resolve_scenario(f"demo:{demo}")
    fast = [e.model_copy(update={"delay_ms": 0}) for e in scenario.script]
    original = record_of(scenario.model_copy(update={"script": fast}))
    turn = replay_turn(original)
    again = run(turn)
    assert again.replay_of == original.run_id
    assert again.run_id != original.run_id
    assert [same(s) for s in again.steps] == [same(s) for s in original.steps]
    assert outcome(again) == outcome(original)
    assert again.policy == original.policy
    assert isinstance(turn.provider, ReplayProvider)
    assert turn.provider.replayed == [s.index for s in original.steps]
    assert again.provider == "replay"


def test_a_blind_retry_recording_replays_its_repeated_request_in_order() -> None:
    # feedback_history = none sends the same request on every retry; each got its own answer.
    original = record_of(build(SMS, ["policy.feedback_history=none"]))
    assert original.steps[1].request == original.steps[2].request == original.steps[3].request
    again = run(replay_turn(original))
    assert [same(s) for s in again.steps] == [same(s) for s in original.steps]
    assert again.status == "succeeded" and again.output == PLAIN


def test_knobs_that_do_not_change_requests_replay_offline_to_a_new_outcome() -> None:
    original = record_of(build(SMS))
    # A laxer validator accepts the second draft; a transcript that keeps failed attempts.
    turn = replay_turn(
        original, overrides=["validators.1.max=200", "policy.clear_failed_attempts=false"]
    )
    again = run(turn)
    assert again.status == "succeeded" and again.output == LONG
    assert [same(s)["request"] for s in again.steps] == [
        same(s)["request"] for s in original.steps[:3]
    ]
    assert [s.response for s in again.steps] == [s.response for s in original.steps[:3]]
    assert [m.content for m in again.transcript if m.role == "assistant"][-2:] == [BOLD, LONG]
    assert again.overrides == ["validators.1.max=200", "policy.clear_failed_attempts=false"]


# ---- a policy change: the identical prefix, then a divergence where the knob bites -------------

# (scenario, the recording's overrides, the replay's override, the step where the request first
# differs, how the divergence message explains it)
KNOBS = {
    "feedback_history=latest": (
        SMS,
        [],
        "policy.feedback_history=latest",
        4,
        f"messages[3] (assistant) differs: recorded {BOLD!r}, now {LONG[:48]!r}…",
    ),
    "feedback_history=none": (
        SMS,
        [],
        "policy.feedback_history=none",
        3,
        "the request has 3 messages, the recording 5: messages[3] missing (recorded assistant "
        f"{BOLD!r}) (the request repeats an earlier one, whose recorded answer is used up)",
    ),
    "keep_failed_attempts=false": (
        SMS,
        [],
        "policy.keep_failed_attempts=false",
        3,
        f"messages[3] differs: recorded assistant {BOLD!r}, now user 'No md.'",
    ),
    "feedback_role=system": (
        SMS,
        [],
        "policy.feedback_role=system",
        3,
        "messages[4] differs: recorded user 'No md.', now system 'No md.'",
    ),
    "feedback_role=tool": (
        SMS,
        [],
        "policy.feedback_role=tool",
        3,
        "messages[3] (assistant) differs: recorded …' to 3pm.', now …' to 3pm. "
        "[validation_feedback({})]'",
    ),
    "max_steps lowered (final step forced)": (
        SMS,
        [],
        "policy.max_steps=3",
        3,
        "system prompt differs: recorded …'essages.', now …'essages.\\n\\nTools are disabled",
    ),
    "max_steps raised (no longer forced)": (
        SMS,
        ["policy.max_steps=4"],
        "policy.max_steps=8",
        4,
        "system prompt differs: recorded …'essages.\\n\\nTools are disabled",
    ),
    "final_step=none": (
        SMS,
        ["policy.max_steps=4"],
        "policy.final_step=none",
        4,
        "system prompt differs: recorded …'essages.\\n\\nTools are disabled",
    ),
    "final_step_instruction": (
        SMS,
        ["policy.max_steps=4"],
        'policy.final_step_instruction="Answer now."',
        4,
        "system prompt differs: recorded …'sages.\\n\\nTools are disabled now. Answer the "
        "user '…, now …'sages.\\n\\nAnswer now.'",
    ),
    "output_mode=native": (
        STRUCTURED,
        [],
        "policy.output_mode=native",
        1,
        "tools differ: recorded ['final_answer'], now []",
    ),
    "output_mode=prompted": (
        STRUCTURED,
        [],
        "policy.output_mode=prompted",
        1,
        "system prompt differs: recorded …'essages.', now …'essages.\\n\\nRespond only with a JSON",
    ),
    "final_tool_instruction": (
        STRUCTURED,
        [],
        'policy.final_tool_instruction="Now call {tool}."',
        2,
        "system prompt differs: recorded …'sages.\\n\\nThis is the last step: call the "
        "final_an'…, now …'sages.\\n\\nNow call final_answer.'",
    ),
    "model.temperature": (
        SMS,
        [],
        "model.temperature=0.5",
        1,
        "model.temperature differs: recorded None, now 0.5",
    ),
}


@pytest.mark.parametrize("knob", list(KNOBS))
def test_a_policy_change_replays_the_prefix_and_diverges_where_expected(knob: str) -> None:
    data, recorded_with, override, diverges_at, why = KNOBS[knob]
    original = record_of(build(data, recorded_with))

    offline = run(replay_turn(original, overrides=[override]))
    prefix = diverges_at - 1
    assert [asked_and_answered(s) for s in offline.steps[:prefix]] == [
        asked_and_answered(s) for s in original.steps[:prefix]
    ]
    assert len(offline.steps) == diverges_at
    assert offline.status == "error" and offline.termination == "provider_error"
    assert offline.error is not None and offline.error.type == "ReplayDivergence"
    message = offline.error.message
    assert message.startswith(f"replay diverged at step {diverges_at}: ")
    assert why in message, message
    assert "\n" not in message
    assert offline.steps[-1].status == "error" and offline.steps[-1].error == message

    # Live on the scripted model from the divergence on: a fresh run under the new policy.
    turn = replay_turn(original, overrides=[override], live=build_provider)
    live = run(turn)
    fresh = record_of(build(data, [*recorded_with, override]))
    assert [same(s) for s in live.steps] == [same(s) for s in fresh.steps]
    assert outcome(live) == outcome(fresh)
    assert isinstance(turn.provider, ReplayProvider)
    assert turn.provider.replayed == list(range(1, diverges_at))
    assert turn.provider.live_calls[0] == diverges_at
    assert live.provider == "replay+scripted"


def test_a_recorded_failed_call_is_not_an_answer() -> None:
    data = {**SMS, "script": [SMS["script"][0], {"text": "Hi", "error": "overloaded"}]}
    original = record_of(build(data))
    assert original.steps[1].status == "error"
    offline = run(replay_turn(original))
    assert offline.error is not None
    assert offline.error.message == (
        "replay diverged at step 2: the recorded call ended error (overloaded), no answer to reuse"
    )
    live = FakeLive(StepResponse(text=PLAIN, finish_reason="stop"))
    again = run(replay_turn(original, live=lambda _: live))
    assert again.status == "succeeded" and again.output == PLAIN
    assert len(live.requests) == 1 and live.requests[0] == original.steps[1].request


def test_a_replay_longer_than_the_recording_diverges_past_its_end() -> None:
    original = record_of(build(SMS, ["policy.max_attempts=1"]))  # fails at step 2
    assert len(original.steps) == 2
    offline = run(replay_turn(original, overrides=["policy.max_attempts=3"]))
    assert offline.error is not None
    assert offline.error.message == "replay diverged at step 3: the recording has only 2 step(s)"


# ---- any live provider -------------------------------------------------------------------------


def test_a_live_provider_is_asked_only_from_the_divergence_on() -> None:
    original = record_of(build(SMS))
    live = FakeLive(
        StepResponse(text="Hi Sam - 3pm.", finish_reason="stop"),
    )
    events: list[Event] = []
    turn = replay_turn(
        original,
        overrides=["policy.keep_failed_attempts=false"],
        live=lambda _: live,
        sink=events.append,
    )
    again = run(turn)
    assert again.status == "succeeded" and again.output == "Hi Sam - 3pm."
    assert [same(s) for s in again.steps[:2]] == [same(s) for s in original.steps[:2]]
    assert len(live.requests) == 1
    assert live.requests[0] == again.steps[2].request
    assert [m.role for m in live.requests[0].messages] == ["user", "assistant", "tool", "user"]
    assert again.provider == "replay+fake"
    # The replayed steps stream like live ones: their text reaches subscribers as deltas.
    assert sum(isinstance(e, StepStarted) for e in events) == 3
    assert isinstance(events[-1], RunFinished) and events[-1].record == again


def test_replayed_chunks_are_reasoning_text_tool_calls_then_the_recorded_response() -> None:
    call = ToolCall(id="c7", name="lookup_contact", arguments={"name": "Sam"})
    original = record_of(build(SMS))
    step = original.steps[0]
    response = StepResponse(text="Let me look.", tool_calls=[call], reasoning="think")
    recorded = original.model_copy(
        update={"steps": [step.model_copy(update={"response": response})]}
    )
    provider = ReplayProvider(recorded, recorded_settings=_settings(), settings=_settings())

    async def collect() -> list[ProviderChunk]:
        return [c async for c in provider.stream(step.request)]

    chunks = asyncio.run(collect())
    assert [c.kind for c in chunks] == ["reasoning", "text", "tool_call", "completed"]
    assert chunks[2].model_dump() == {
        "kind": "tool_call",
        "call_index": 0,
        "id": "c7",
        "name": "lookup_contact",
        "arguments_delta": '{"name": "Sam"}',
    }
    assert isinstance(chunks[-1], Completed) and chunks[-1].response == response


def test_scripted_skip_to_answers_with_the_entry_of_that_position() -> None:
    provider = ScriptedProvider([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    provider.skip_to(2)

    async def first() -> list[ProviderChunk]:
        return [c async for c in provider.stream(StepRequest(system="", messages=[]))]

    chunks = asyncio.run(first())
    assert isinstance(chunks[-1], Completed) and chunks[-1].response.text == "three"
    assert provider.calls == 3


# ---- side-effect tools ---------------------------------------------------------------------------

TOOLS_PY = """
    from pathlib import Path

    HERE = Path(__file__).parent

    def send_sms(to, body):
        with open(HERE / "sent.log", "a") as f:
            f.write(f"{to}: {body}\\n")
        return f"sent to {to}"

    def lookup(name):
        with open(HERE / "lookups.log", "a") as f:
            f.write(name + "\\n")
        return name + ": +1 555 0100"
"""


def _side_effects(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "tools.py").write_text(textwrap.dedent(TOOLS_PY), encoding="utf-8")
    params = {
        "type": "object",
        "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
    }
    return {
        "name": "notify",
        "prompt": {"system": SYSTEM, "user": USER},
        "tools": [
            {"name": "lookup", "function": "tools.py:lookup", "parameters": LOOKUP["parameters"]},
            {
                "name": "send_sms",
                "function": "tools.py:send_sms",
                "parameters": params,
                "side_effects": True,
            },
        ],
        "script": [
            {"tool_calls": [{"name": "lookup", "arguments": {"name": "Sam"}}]},
            {"tool_calls": [{"name": "send_sms", "arguments": {"to": "Sam", "body": "3pm"}}]},
            {"text": "Sent."},
        ],
    }


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_side_effect_tools_are_not_run_again(tmp_path: Path) -> None:
    original = record_of(build(_side_effects(tmp_path), base=tmp_path))
    assert original.status == "succeeded"
    assert _lines(tmp_path / "sent.log") == ["Sam: 3pm"]
    assert _lines(tmp_path / "lookups.log") == ["Sam"]

    again = run(replay_turn(original))
    assert again.status == "succeeded"
    assert _lines(tmp_path / "sent.log") == ["Sam: 3pm"]  # not sent twice
    assert _lines(tmp_path / "lookups.log") == ["Sam", "Sam"]  # a plain tool runs again
    sent = again.steps[1].tool_results[0]
    assert sent.replayed and sent.content == "sent to Sam"
    assert sent == original.steps[1].tool_results[0].model_copy(update={"replayed": True})
    assert not again.steps[0].tool_results[0].replayed


def test_the_recorded_result_is_reused_on_a_live_continuation(tmp_path: Path) -> None:
    original = record_of(build(_side_effects(tmp_path), base=tmp_path))
    send = ToolCall(id="live_1", name="send_sms", arguments={"body": "3pm", "to": "Sam"})
    live = FakeLive(
        StepResponse(tool_calls=[send], finish_reason="tool_calls"),
        StepResponse(text="Done.", finish_reason="stop"),
    )
    again = run(replay_turn(original, overrides=['prompt.user="Ping Sam."'], live=lambda _: live))
    assert again.status == "succeeded" and again.output == "Done."
    assert _lines(tmp_path / "sent.log") == ["Sam: 3pm"]
    result = again.steps[0].tool_results[0]
    assert result.replayed and result.tool_call_id == "live_1" and result.content == "sent to Sam"


def test_an_unrecorded_side_effect_call_is_a_divergence(tmp_path: Path) -> None:
    original = record_of(build(_side_effects(tmp_path), base=tmp_path))
    other = ToolCall(id="live_1", name="send_sms", arguments={"to": "Sam", "body": "4pm"})
    live = FakeLive(StepResponse(tool_calls=[other], finish_reason="tool_calls"))
    again = run(replay_turn(original, overrides=['prompt.user="Ping Sam."'], live=lambda _: live))
    assert _lines(tmp_path / "sent.log") == ["Sam: 3pm"]
    assert again.status == "error" and again.termination == "provider_error"
    assert again.error is not None and again.error.type == "ReplayDivergence"
    assert again.error.message == (
        'step 1: side-effect tool call send_sms({"body":"4pm","to":"Sam"}) was never recorded, '
        'so it is not run (recorded: send_sms({"body":"3pm","to":"Sam"}))'
    )
    assert again.steps[0].status == "error"


def test_a_recorded_call_is_reused_once_per_recorded_execution(tmp_path: Path) -> None:
    original = record_of(build(_side_effects(tmp_path), base=tmp_path))
    hook = RecordedTools(original)
    call = ToolCall(id="x", name="send_sms", arguments={"to": "Sam", "body": "3pm"})
    config = build(_side_effects(tmp_path), base=tmp_path).tools[1]
    assert hook(call, config).content == "sent to Sam"
    with pytest.raises(ReplayDivergence, match="the recording made this call fewer times"):
        hook(call, config)
    never = ToolCall(id="y", name="lookup_contact", arguments={})
    with pytest.raises(ReplayDivergence, match="the recording has no call of lookup_contact"):
        hook(never, config)
