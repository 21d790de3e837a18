"""The bridge: turns run on the qasync loop, events become signals, every run is recorded,
Stop records a cancelled run, a turn that cannot be built is a one-line ``failed`` signal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.runtime.runner import InspectorEventLoop, TurnRunner
from inspector.core.events import Event
from inspector.core.records import RunRecord
from inspector.store import Store
from tests.helpers.scenarios import streaming_scenario, write_scenario


def _collect(runner: TurnRunner) -> list[Event]:
    events: list[Event] = []
    runner.engineEvent.connect(events.append)
    return events


def test_the_loop_installs_asyncgen_hooks_while_it_runs(qloop: InspectorEventLoop) -> None:
    hooks = sys.get_asyncgen_hooks()
    assert hooks.firstiter == qloop._asyncgen_firstiter_hook
    assert hooks.finalizer == qloop._asyncgen_finalizer_hook
    qloop.restore_asyncgen_hooks()
    assert sys.get_asyncgen_hooks().firstiter != qloop._asyncgen_firstiter_hook


def test_a_demo_runs_streams_and_is_recorded(
    runner: TurnRunner, store: Store, qtbot: QtBot
) -> None:
    events = _collect(runner)
    started: list[str] = []
    runner.started.connect(started.append)
    with qtbot.waitSignal(runner.finished, timeout=20_000) as finished:
        assert runner.start("demo:retry-feedback")
    record: RunRecord = finished.args[0]
    assert record.status == "succeeded"
    assert started == [record.run_id]
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("text_delta") > 3  # streamed, not delivered whole
    assert kinds.count("step_started") == len(record.steps)
    assert store.load(record.run_id).model_dump() == record.model_dump()
    qtbot.waitUntil(lambda: not runner.busy)


def test_overrides_reach_the_run_and_its_record(runner: TurnRunner, qtbot: QtBot) -> None:
    with qtbot.waitSignal(runner.finished, timeout=20_000) as finished:
        runner.start("demo:retry-feedback", ["policy.max_attempts=1"])
    record: RunRecord = finished.args[0]
    assert record.policy.max_attempts == 1
    assert record.overrides == ["policy.max_attempts=1"]
    assert record.status == "failed" and record.termination == "validator_exhausted"


def test_stop_mid_stream_records_a_cancelled_run(
    runner: TurnRunner, store: Store, qtbot: QtBot, tmp_path: Path
) -> None:
    scenario = streaming_scenario(tmp_path)

    def stop_at_first_word(event: Event) -> None:
        if event.kind == "text_delta":
            runner.stop()

    runner.engineEvent.connect(stop_at_first_word)
    with qtbot.waitSignal(runner.finished, timeout=20_000) as finished:
        runner.start(str(scenario))
    record: RunRecord = finished.args[0]
    assert record.status == "cancelled" and record.termination == "cancelled"
    assert [s.status for s in record.steps] == ["cancelled"]
    assert store.load(record.run_id).status == "cancelled"
    assert store.runs()[0].run_id == record.run_id


def test_one_turn_at_a_time(runner: TurnRunner, qtbot: QtBot, tmp_path: Path) -> None:
    scenario = str(streaming_scenario(tmp_path))
    with qtbot.waitSignal(runner.busyChanged) as busy:
        assert runner.start(scenario)
    assert busy.args == [True]
    assert not runner.start(scenario)
    with qtbot.waitSignal(runner.busyChanged, timeout=20_000) as idle:
        runner.stop()
    assert idle.args == [False]


def test_a_broken_scenario_is_one_failed_line(
    runner: TurnRunner, store: Store, qtbot: QtBot, tmp_path: Path
) -> None:
    broken = write_scenario(
        tmp_path, 'name = "broken"\n[prompt]\nuser = "hi"\n[policy]\nmax_steps = 0\n'
    )
    finished: list[RunRecord] = []
    runner.finished.connect(finished.append)
    with qtbot.waitSignal(runner.failed, timeout=20_000) as failed:
        runner.start(str(broken))
    message = failed.args[0]
    assert "policy.max_steps" in message and "\n" not in message
    assert "Traceback" not in message
    qtbot.waitUntil(lambda: not runner.busy)
    assert finished == [] and store.runs() == []


def test_an_unexpected_error_while_building_is_named_not_raised(
    store: Store, qloop: InspectorEventLoop, qtbot: QtBot
) -> None:
    def prepare(ref: str, overrides: list[str], sink: object) -> object:
        raise RuntimeError("the provider could not start\nsecond line")

    runner = TurnRunner(store, prepare=prepare)  # type: ignore[arg-type]
    with qtbot.waitSignal(runner.failed, timeout=10_000) as failed:
        runner.start("demo:retry-feedback")
    assert failed.args == ["RuntimeError: second line"]


def test_the_provider_is_prepared_on_the_worker_thread(
    runner: TurnRunner, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from typing import Any

    from inspector.providers import factory

    real_build = factory.build_provider
    prepared_on: list[int] = []

    def build_with_prepare(scenario: Any) -> Any:
        provider = real_build(scenario)
        provider.prepare = lambda: prepared_on.append(threading.get_ident())  # type: ignore[attr-defined]
        return provider

    monkeypatch.setattr(factory, "build_provider", build_with_prepare)
    with qtbot.waitSignal(runner.finished, timeout=20_000):
        assert runner.start("demo:retry-feedback")
    qtbot.waitUntil(lambda: not runner.busy)
    assert len(prepared_on) == 1 and prepared_on[0] != threading.main_thread().ident
