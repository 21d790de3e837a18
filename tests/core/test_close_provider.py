"""Providers with connections are closed after a turn, and a failing close never loses the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inspector.commands.run import drive
from inspector.core.loop import Turn
from inspector.core.provider import Completed, ProviderChunk
from inspector.core.records import StepRequest, StepResponse
from inspector.core.scenario import scenario_from_dict


class ClosingProvider:
    name = "closing"

    def __init__(self, *, fail: bool = False) -> None:
        self.closed = 0
        self.fail = fail

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        yield Completed(response=StepResponse(text="hello", finish_reason="stop"))

    async def aclose(self) -> None:
        self.closed += 1
        if self.fail:
            raise OSError("socket already gone")


def _turn(provider: ClosingProvider) -> Turn:
    scenario = scenario_from_dict(
        {"name": "t", "model": {"provider": "openai", "name": "m"}, "prompt": {"user": "hi"}},
        source="t.toml",
        base_dir=Path("."),
    )
    return Turn(scenario, provider)


def test_drive_closes_the_provider_once() -> None:
    provider = ClosingProvider()
    record = drive(_turn(provider), [])
    assert record.status == "succeeded" and provider.closed == 1


def test_a_failing_close_is_reported_and_the_record_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    provider = ClosingProvider(fail=True)
    record = drive(_turn(provider), [])
    assert record.output == "hello" and provider.closed == 1
    assert "closing the provider failed: OSError: socket already gone" in capsys.readouterr().err
