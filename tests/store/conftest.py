"""Store test helpers: a fresh store per test and turns recorded through the real engine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.core.events import Event, fan_out
from inspector.core.loop import run_turn
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario
from inspector.store import Store

# The demos that run offline on the scripted model (local-model needs a llama.cpp server).
OFFLINE_DEMOS = (
    "empty-final",
    "final-answer-tool",
    "invalid-output-fallback",
    "retry-feedback",
    "step-cap",
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "runs.sqlite3") as opened:
        yield opened


def fast(scenario: Scenario) -> Scenario:
    """The scenario with its scripted delays removed (tests do not wait for streaming)."""
    script = [e.model_copy(update={"delay_ms": 0.0}) for e in scenario.script]
    return scenario.model_copy(update={"script": script})


def record_turn(
    store: Store, scenario: Scenario, **kwargs: object
) -> tuple[RunRecord, list[Event]]:
    """Runs ``scenario`` with the store's recorder subscribed; returns the record and every
    event the engine emitted."""
    seen: list[Event] = []
    sink = fan_out(store.recorder(), seen.append)
    record = asyncio.run(run_turn(scenario, build_provider(scenario), sink, **kwargs))
    return record, seen


def record_demo(store: Store, name: str, *overrides: str) -> tuple[RunRecord, list[Event]]:
    return record_turn(store, fast(resolve_scenario(f"demo:{name}", list(overrides))))
