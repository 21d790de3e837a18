"""Shared builders of runs for the tests: real runs of the built-in demos (the engine on the
scripted model, with the demos' streaming delays removed: they only pace a live view) and the
store's summary row of a run."""

from __future__ import annotations

from inspector.core.events import Event
from inspector.core.loop import run_turn
from inspector.core.records import RunRecord
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario
from inspector.store import RunSummary


async def demo_run(demo: str, *overrides: str) -> tuple[RunRecord, list[Event]]:
    """The record and every event of one run of ``demo:NAME`` under ``--set`` overrides."""
    scenario = resolve_scenario(f"demo:{demo}", list(overrides))
    undelayed = [entry.model_copy(update={"delay_ms": 0.0}) for entry in scenario.script]
    scenario = scenario.model_copy(update={"script": undelayed})
    events: list[Event] = []
    record = await run_turn(
        scenario, build_provider(scenario), events.append, overrides=list(overrides)
    )
    return record, events


async def demo_record(demo: str, *overrides: str) -> RunRecord:
    record, _ = await demo_run(demo, *overrides)
    return record


def run_summary(run_id: str, status: str = "succeeded", **changes: object) -> RunSummary:
    fields: dict[str, object] = {
        "run_id": run_id,
        "scenario": "retry-feedback",
        "status": status,
        "termination": "validator_exhausted" if status == "failed" else "stop",
        "started_at": "2026-01-04T09:30:00.000+00:00",
        "duration_ms": 1530.0,
        "steps": 4,
        "input_tokens": 370,
        "output_tokens": 84,
        "replay_of": None,
        "provider": "scripted",
        "model": "demo",
    }
    return RunSummary.model_validate({**fields, **changes})
