"""Provider errors and cancellation end the turn with a finished record, never a pending step."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core.events import (
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
    ToolExecuted,
)
from inspector.core.loop import run_turn
from inspector.core.provider import ProviderChunk, TextChunk
from inspector.core.records import RunError, RunRecord, StepRequest
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.providers.scripted import ScriptedProvider

BASE: dict[str, Any] = {"name": "errors", "prompt": {"system": "sys", "user": "hi"}}
USER = {"role": "user", "content": "hi"}
CANCELLED = RunError(type="Cancelled", message="cancelled by the user")
MANY_WORDS = " ".join(f"word{i}" for i in range(40))


def scenario(data: dict[str, Any], tmp_path: Path) -> Scenario:
    return scenario_from_dict({**BASE, **data}, source="test.toml", base_dir=tmp_path)


async def run(data: dict[str, Any], tmp_path: Path) -> tuple[RunRecord, list[Event]]:
    sc = scenario(data, tmp_path)
    events: list[Event] = []
    record = await run_turn(sc, ScriptedProvider(sc.script), events.append)
    assert_all_steps_closed(record, events)
    return record, events


def assert_all_steps_closed(record: RunRecord, events: list[Event]) -> None:
    started = [e.index for e in events if isinstance(e, StepStarted)]
    finished = [e.step.index for e in events if isinstance(e, StepFinished)]
    assert started == finished == [s.index for s in record.steps]
    assert all(s.status != "pending" for s in record.steps)
    assert isinstance(events[-1], RunFinished)
    assert events[-1].record == record


# ---- provider errors ----------------------------------------------------------------------------


async def test_provider_error_keeps_the_partial_text(tmp_path: Path) -> None:
    record, events = await run(
        {"script": [{"text": "Hi Sam, the meeting", "error": "boom"}, {"text": "never"}]}, tmp_path
    )
    assert (record.status, record.termination) == ("error", "provider_error")
    assert record.error == RunError(type="ScriptedError", message="boom")
    assert record.output is None
    [step] = record.steps
    assert (step.index, step.attempt, step.status, step.error) == (1, 1, "error", "boom")
    assert step.response is not None
    assert step.response.text == "Hi Sam, the meeting"
    assert step.verdicts == [] and step.tool_results == []
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi Sam, the meeting"
    assert [m.model_dump(mode="json") for m in record.transcript] == [USER]
    assert record.budgets.steps_used == 1


async def test_provider_error_before_any_text(tmp_path: Path) -> None:
    record, _ = await run({"script": [{"error": "503 overloaded"}]}, tmp_path)
    assert (record.status, record.termination) == ("error", "provider_error")
    assert record.error == RunError(type="ScriptedError", message="503 overloaded")
    [step] = record.steps
    assert step.status == "error" and step.response is not None and step.response.text == ""


async def test_provider_error_after_a_tool_round_trip(tmp_path: Path) -> None:
    record, _ = await run(
        {
            "tools": [{"name": "lookup", "result": "Sam: +1 555 0100"}],
            "script": [
                {"tool_calls": [{"name": "lookup", "id": "c1"}], "usage": {"output_tokens": 7}},
                {"text": "Sam is", "error": "connection reset"},
            ],
        },
        tmp_path,
    )
    assert (record.status, record.termination) == ("error", "provider_error")
    assert [(s.status, s.error) for s in record.steps] == [
        ("success", None),
        ("error", "connection reset"),
    ]
    assert record.steps[1].response is not None and record.steps[1].response.text == "Sam is"
    assert [m.role for m in record.transcript] == ["user", "assistant", "tool"]
    assert record.usage.output_tokens == 7  # only the completed call is counted


async def test_script_exhausted(tmp_path: Path) -> None:
    record, _ = await run(
        {"validators": [{"kind": "max_length", "max": 3}], "script": [{"text": "too long"}]},
        tmp_path,
    )
    assert (record.status, record.termination) == ("error", "provider_error")
    assert record.error == RunError(
        type="ScriptExhausted",
        message="scripted model: script exhausted at call 2 (the script has 1 entry)",
    )
    assert [(s.attempt, s.status) for s in record.steps] == [
        (1, "failed_validation"),
        (2, "error"),
    ]
    assert record.steps[1].error == record.error.message


class _Truncated:
    """A provider whose stream stops without the final ``Completed`` chunk."""

    name = "truncated"

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        yield TextChunk(text="Hi ")
        yield TextChunk(text="Sam")


class _Crashing:
    """A provider with a bug: it raises something that is not a ``ProviderError``."""

    name = "crashing"

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        yield TextChunk(text="Hi ")
        raise RuntimeError("provider bug")


async def test_stream_without_a_final_response_is_a_provider_error(tmp_path: Path) -> None:
    events: list[Event] = []
    record = await run_turn(
        scenario({"script": [{"text": "x"}]}, tmp_path), _Truncated(), events.append
    )
    assert_all_steps_closed(record, events)
    assert (record.status, record.termination) == ("error", "provider_error")
    message = "truncated: the stream ended without a final response"
    assert record.error == RunError(type="ProviderError", message=message)
    [step] = record.steps
    assert (step.status, step.error) == ("error", message)
    assert step.response is not None and step.response.text == "Hi Sam"


async def test_unexpected_provider_exception_still_finishes_the_step(tmp_path: Path) -> None:
    events: list[Event] = []
    sc = scenario({"script": [{"text": "x"}]}, tmp_path)
    record = await run_turn(sc, _Crashing(), events.append)
    assert_all_steps_closed(record, events)
    assert (record.status, record.termination) == ("error", "provider_error")
    # error.type names the exception; the message does not repeat it.
    assert record.error == RunError(type="RuntimeError", message="provider bug")
    [step] = record.steps
    assert (step.status, step.error) == ("error", "RuntimeError: provider bug")
    assert step.response is not None and step.response.text == "Hi "


async def test_unexpected_exception_outside_a_model_call(tmp_path: Path) -> None:
    """A crash after the call (here: a broken replay hook while tools run) is not a provider
    error: the termination is what the turn was handling."""

    def broken_replay_store(call: Any, config: Any) -> None:
        raise LookupError("replay store corrupt\nrow 7 unreadable")

    sc = scenario(
        {
            "tools": [{"name": "send", "result": "sent", "side_effects": True}],
            "script": [{"tool_calls": [{"name": "send", "id": "c1"}]}, {"text": "never"}],
        },
        tmp_path,
    )
    events: list[Event] = []
    record = await run_turn(
        sc, ScriptedProvider(sc.script), events.append, recorded_tools=broken_replay_store
    )
    assert_all_steps_closed(record, events)
    assert (record.status, record.termination) == ("error", "validator_exhausted")
    assert record.error == RunError(type="LookupError", message="row 7 unreadable")
    [step] = record.steps
    assert (step.status, step.error, step.tool_results) == (
        "error",
        "LookupError: row 7 unreadable",
        [],
    )
    assert [m.model_dump(mode="json") for m in record.transcript] == [USER]


# ---- event subscribers ----------------------------------------------------------------------


@pytest.mark.parametrize("fails_on", [RunStarted, TextDelta, ToolExecuted, RunFinished])
async def test_a_subscriber_that_raises_is_detached_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fails_on: type[Event]
) -> None:
    sc = scenario(
        {
            "tools": [{"name": "lookup", "result": "Sam: +1 555 0100"}],
            "script": [{"tool_calls": [{"name": "lookup", "id": "c1"}]}, {"text": "Sam, 3pm."}],
        },
        tmp_path,
    )
    same: dict[str, Any] = {"run_id": "run1", "clock": lambda: 0.0, "now": lambda: "t0"}
    healthy: list[Event] = []
    expected = await run_turn(sc, ScriptedProvider(sc.script), healthy.append, **same)
    seen: list[Event] = []

    def fragile(event: Event) -> None:
        seen.append(event)
        if isinstance(event, fails_on):
            raise RuntimeError("store is full\ndisk quota exceeded")

    record = await run_turn(sc, ScriptedProvider(sc.script), fragile, **same)

    assert record == expected
    assert (record.status, record.termination, record.output) == ("succeeded", "stop", "Sam, 3pm.")
    assert [r.content for r in record.steps[0].tool_results] == ["Sam: +1 555 0100"]
    # It saw every event up to the one it failed on, and nothing after: it was detached.
    cut = next(i for i, e in enumerate(healthy) if isinstance(e, fails_on))
    assert seen == healthy[: cut + 1]
    assert capsys.readouterr().err == (
        "agent-inspector: event subscriber failed: RuntimeError: disk quota exceeded; detached\n"
    )


# ---- cancellation ---------------------------------------------------------------------------


async def cancel_when(
    sc: Scenario, ready: Any, wait: Any = None
) -> tuple[asyncio.Task[RunRecord], RunRecord, list[Event]]:
    """Runs the turn as a task, cancels it once ``ready(event)`` saw an event (and ``wait()``
    returned, if given), then awaits the task."""
    seen = asyncio.Event()
    events: list[Event] = []

    def sink(event: Event) -> None:
        events.append(event)
        if ready(event):
            seen.set()

    task = asyncio.create_task(run_turn(sc, ScriptedProvider(sc.script), sink))
    await asyncio.wait_for(seen.wait(), 5)
    if wait is not None:
        await asyncio.wait_for(wait(), 5)
    task.cancel()
    record = await task
    return task, record, events


async def test_cancel_mid_stream_returns_a_cancelled_record(tmp_path: Path) -> None:
    sc = scenario({"script": [{"text": MANY_WORDS, "delay_ms": 50}]}, tmp_path)
    task, record, events = await cancel_when(sc, lambda e: isinstance(e, TextDelta))
    assert not task.cancelled()  # the turn handled it and returned
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert record.error == CANCELLED
    assert record.output is None
    [step] = record.steps
    assert (step.index, step.attempt, step.status, step.error) == (1, 1, "cancelled", None)
    received = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert received.startswith("word0 ")
    assert len(received) < len(MANY_WORDS)
    assert step.response is not None and step.response.text == received
    assert [e.kind for e in events][-2:] == ["step_finished", "run_finished"]
    assert_all_steps_closed(record, events)
    assert [m.model_dump(mode="json") for m in record.transcript] == [USER]


async def test_cancel_before_the_first_chunk(tmp_path: Path) -> None:
    sc = scenario({"script": [{"text": "late", "delay_ms": 1000}]}, tmp_path)
    _, record, events = await cancel_when(sc, lambda e: isinstance(e, StepStarted))
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    [step] = record.steps
    assert step.status == "cancelled"
    assert step.response is not None and step.response.text == ""
    assert [e.kind for e in events] == [
        "run_started",
        "step_started",
        "step_finished",
        "run_finished",
    ]


async def test_cancel_after_finished_steps_only_cancels_the_open_one(tmp_path: Path) -> None:
    sc = scenario(
        {
            "tools": [{"name": "lookup", "result": "ok"}],
            "script": [
                {"tool_calls": [{"name": "lookup"}]},
                {"text": MANY_WORDS, "delay_ms": 50},
            ],
        },
        tmp_path,
    )
    _, record, events = await cancel_when(sc, lambda e: isinstance(e, TextDelta) and e.index == 2)
    assert record.status == "cancelled"
    assert [(s.index, s.status) for s in record.steps] == [(1, "success"), (2, "cancelled")]
    assert [m.role for m in record.transcript] == ["user", "assistant", "tool"]
    assert_all_steps_closed(record, events)


async def test_cancel_while_a_tool_runs(tmp_path: Path) -> None:
    flag = tmp_path / "tool-started"
    (tmp_path / "tools.py").write_text(
        textwrap.dedent(
            f"""
            import asyncio
            from pathlib import Path

            async def slow():
                Path({str(flag)!r}).touch()
                await asyncio.sleep(30)
                return "done"
            """
        ),
        encoding="utf-8",
    )
    sc = scenario(
        {
            "tools": [{"name": "slow", "function": "tools.py:slow"}],
            "script": [{"tool_calls": [{"name": "slow", "id": "c1"}]}, {"text": "never"}],
        },
        tmp_path,
    )

    async def tool_started() -> None:
        while not flag.exists():
            await asyncio.sleep(0.005)

    _, record, events = await cancel_when(sc, lambda e: isinstance(e, ToolCallDelta), tool_started)
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    [step] = record.steps
    assert step.status == "cancelled"
    assert step.response is not None
    assert [c.name for c in step.response.tool_calls] == ["slow"]
    assert step.tool_results == []
    assert [m.model_dump(mode="json") for m in record.transcript] == [USER]
    assert_all_steps_closed(record, events)


async def test_cancel_while_a_validator_runs(tmp_path: Path) -> None:
    flag = tmp_path / "validator-started"
    (tmp_path / "checks.py").write_text(
        textwrap.dedent(
            f"""
            import asyncio
            from pathlib import Path

            async def slow(output, ctx):
                Path({str(flag)!r}).touch()
                await asyncio.sleep(30)
            """
        ),
        encoding="utf-8",
    )
    sc = scenario(
        {
            "validators": [{"kind": "python", "function": "checks.py:slow"}],
            "policy": {"validator_timeout_s": 60},
            "script": [{"text": "answer"}],
        },
        tmp_path,
    )

    async def validator_started() -> None:
        while not flag.exists():
            await asyncio.sleep(0.005)

    _, record, events = await cancel_when(
        sc, lambda e: isinstance(e, StepStarted), validator_started
    )
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    [step] = record.steps
    assert step.status == "cancelled"
    assert step.response is not None and step.response.text == "answer"
    assert step.verdicts == []
    assert_all_steps_closed(record, events)


def test_fan_out_detaches_only_the_broken_subscriber(capsys) -> None:  # type: ignore[no-untyped-def]
    from inspector.core.events import TextDelta, fan_out

    seen: list[str] = []

    def broken(event: object) -> None:
        raise RuntimeError("view crashed")

    sink = fan_out(broken, lambda e: seen.append(e.kind))
    for _ in range(3):
        sink(TextDelta(run_id="r", index=1, text="x"))
    assert seen == ["text_delta"] * 3
    assert capsys.readouterr().err.count("event subscriber failed: RuntimeError: view crashed") == 1
