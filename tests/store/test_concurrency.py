"""A reader on another connection sees a run while it is written, step by step."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from inspector.core.events import Event, StepFinished, StepStarted
from inspector.core.loop import run_turn
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario
from inspector.store import RunStillRecording, Store
from tests.store.conftest import fast
from tests.store.synthetic import long_turn

StepView = tuple[str, list[tuple[int, str]]]


def read_steps(path: Path, run_id: str) -> StepView:
    """What a second connection sees of the run: its status and (index, kind) of step events."""
    with Store.open(path) as reader:
        status = reader.runs()[0].status
        kinds = []
        for stored in reader.events(run_id):
            event = stored.event
            if isinstance(event, StepStarted):
                kinds.append((event.index, event.kind))
            elif isinstance(event, StepFinished):
                kinds.append((event.step.index, event.kind))
        if status == "running":
            try:
                reader.load(run_id)
            except RunStillRecording:
                pass
            else:
                raise AssertionError("a running run has no final record yet")
        return status, kinds


def test_reader_thread_sees_each_step_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    views: list[StepView] = []
    errors: list[BaseException] = []
    scenario = fast(resolve_scenario("demo:retry-feedback"))

    def writer() -> None:
        try:
            with Store.open(path) as store:
                recorder = store.recorder()

                def sink(event: Event) -> None:
                    recorder(event)
                    if event.kind in ("step_started", "step_finished"):
                        # Another thread, its own connection, reads while this run is open.
                        reader = threading.Thread(
                            target=lambda: views.append(read_steps(path, event.run_id))
                        )
                        reader.start()
                        reader.join()

                asyncio.run(run_turn(scenario, build_provider(scenario), sink))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    assert not errors
    assert_views_grow_step_by_step(views)
    with Store.open(path) as store:
        assert store.runs()[0].status == "succeeded"


def assert_views_grow_step_by_step(views: list[StepView]) -> None:
    # Every view is "running". A view taken at a step's start shows every step event emitted so
    # far; at a step's finish it shows the same: the finished step is committed with the next
    # step's start (one transaction), before the engine waits for anything.
    assert [status for status, _ in views] == ["running"] * len(views) and len(views) == 8
    expected: list[tuple[int, str]] = []
    for n, (_, kinds) in enumerate(views):
        index = n // 2 + 1
        if n % 2 == 0:
            expected = [*expected, (index, "step_started")]
            assert kinds == expected
        else:
            assert kinds == expected  # its own step_finished comes with step index + 1
            expected = [*expected, (index, "step_finished")]


def test_reading_during_an_open_write_transaction(tmp_path: Path) -> None:
    # WAL: a reader is never blocked by a writer holding its transaction open.
    path = tmp_path / "runs.sqlite3"
    with Store.open(path) as store:
        store.save(long_turn(3, run_id="first0000001"))
        store._conn.execute("BEGIN IMMEDIATE")
        store._conn.execute("DELETE FROM events")
        seen: list[int] = []

        def read() -> None:
            with Store.open(path) as other:
                seen.append(len(other.runs()))

        reader = threading.Thread(target=read)
        reader.start()
        reader.join()
        store._conn.execute("ROLLBACK")
    assert seen == [1]
