"""A model reply past ``MAX_REPLY_CHARS`` ends its step ``error`` with one clear line, keeping
the start of its text (issue 13 item 11: a 50 MB reply cost ~900 MB of memory)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core import streaming
from inspector.core.loop import run_turn
from inspector.core.provider import Completed, ProviderChunk
from inspector.core.records import RunRecord, StepRequest, StepResponse
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider


@pytest.fixture(autouse=True)
def _small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "MAX_REPLY_CHARS", 200)
    monkeypatch.setattr(streaming, "KEPT_OF_TOO_LARGE", 20)


def _scenario(script: list[dict[str, Any]]) -> Any:
    return scenario_from_dict(
        {
            "name": "big",
            "model": {"provider": "scripted", "name": "m"},
            "prompt": {"user": "hi"},
            "tools": [{"name": "lookup", "result": "ok"}],
            "script": script,
        },
        source="big.toml",
        base_dir=Path("."),
    )


async def _run(script: list[dict[str, Any]]) -> RunRecord:
    scenario = _scenario(script)
    return await run_turn(scenario, ScriptedProvider(scenario.script))


def _assert_capped(record: RunRecord, kept: str) -> None:
    assert (record.status, record.termination) == ("error", "provider_error")
    assert record.error is not None and record.error.type == "ReplyTooLarge"
    assert "larger than 200 characters" in record.error.message
    assert "\n" not in record.error.message
    step = record.steps[-1]
    assert step.status == "error" and step.response is not None
    assert step.response.text == kept


async def test_a_streamed_reply_past_the_cap_ends_its_step_with_an_error() -> None:
    text = "word " * 100
    _assert_capped(await _run([{"text": text}]), text[:20])


async def test_tool_call_arguments_count_too() -> None:
    call = {"name": "lookup", "arguments": {"q": "x" * 300}}
    _assert_capped(await _run([{"tool_calls": [call]}]), "")


async def test_a_reply_under_the_cap_is_untouched() -> None:
    record = await _run([{"text": "word " * 30}])
    assert record.status == "succeeded" and record.output == "word " * 30


class WholeReply:
    """A provider that sends its reply whole, in the final chunk (no streamed pieces)."""

    name = "whole"

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        yield Completed(response=StepResponse(text="y" * 500, finish_reason="stop"))


async def test_a_reply_that_arrives_whole_is_capped_too() -> None:
    record = await run_turn(_scenario([{"text": "unused"}]), WholeReply())
    _assert_capped(record, "y" * 20)
