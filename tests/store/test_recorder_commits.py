"""When the recorder commits a finished step: with the run's next transaction (the next step's
pending row), or at the event loop's next turn when the engine waits first — never later than
the turn's next wait, and at once when no event loop runs (a writer thread)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from inspector.core.events import Event, StepFinished, StepStarted
from inspector.core.loop import run_turn
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario
from inspector.store import Store, StoreError
from tests.store.conftest import fast


def turn_events() -> list[Event]:
    """The events of a recorded demo turn (four steps), to feed a recorder by hand."""
    scenario = fast(resolve_scenario("demo:retry-feedback"))
    events: list[Event] = []
    asyncio.run(run_turn(scenario, build_provider(scenario), events.append))
    return events


def through_first_finish(events: list[Event]) -> list[Event]:
    end = next(n for n, e in enumerate(events) if isinstance(e, StepFinished))
    return events[: end + 1]


def status(event: Event) -> str:
    assert isinstance(event, StepFinished)
    return event.step.status


def step_rows(path: Path) -> list[tuple[int, str]]:
    """(index, status) of every step row, as another connection sees them."""
    with sqlite3.connect(path) as conn:
        return list(conn.execute("SELECT idx, status FROM steps ORDER BY idx"))


def test_without_an_event_loop_a_finished_step_is_committed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with Store.open(path) as store:
        recorder = store.recorder()
        first = through_first_finish(turn_events())
        for event in first:
            recorder(event)
        assert step_rows(path) == [(1, status(first[-1]))]


def test_a_finished_step_is_committed_at_the_loops_next_turn(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    events = turn_events()

    async def feed() -> None:
        with Store.open(path) as store:
            recorder = store.recorder()
            first = through_first_finish(events)
            for event in first:
                recorder(event)
            assert step_rows(path) == [(1, "pending")]  # waits for the next step's transaction
            await asyncio.sleep(0)  # the turn waits for something: the step is committed first
            assert step_rows(path) == [(1, status(first[-1]))]

    asyncio.run(feed())


def test_a_finished_step_is_committed_with_the_next_steps_row(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    events = turn_events()
    second = next(n for n, e in enumerate(events) if isinstance(e, StepStarted) and e.index == 2)

    async def feed() -> None:
        with Store.open(path) as store:
            recorder = store.recorder()
            for event in events[: second + 1]:
                recorder(event)
            finished = next(e for e in events if isinstance(e, StepFinished))
            assert step_rows(path) == [(1, status(finished)), (2, "pending")]

    asyncio.run(feed())


def test_closing_the_store_commits_the_finished_steps(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    events = turn_events()

    async def feed() -> None:
        store = Store.open(path)
        recorder = store.recorder()
        first = through_first_finish(events)
        for event in first:
            recorder(event)
        store.close()  # before the loop turns
        assert step_rows(path) == [(1, status(first[-1]))]

    asyncio.run(feed())


def test_a_commit_failing_between_events_is_raised_at_the_runs_next_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.sqlite3"
    events = turn_events()
    first = through_first_finish(events)

    async def feed() -> None:
        with Store.open(path) as store:
            recorder = store.recorder()
            for event in first:
                recorder(event)

            def locked(*args: object) -> None:
                raise sqlite3.OperationalError("database is locked")

            monkeypatch.setattr(recorder.writer, "finalize_step", locked)
            await asyncio.sleep(0)
            assert recorder.error is not None and "database is locked" in str(recorder.error)
            with pytest.raises(StoreError, match=f"recording run {first[0].run_id} .* locked"):
                recorder(events[len(first)])
            recorder(events[len(first) + 1])  # detached from the run: ignored, no error

    asyncio.run(feed())
