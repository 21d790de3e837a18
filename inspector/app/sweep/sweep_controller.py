"""Runs a sweep on the qasync loop and keeps its report current.

The grid's arms are loaded on a worker thread (a user's python validators would freeze the
window), then every run is recorded in the store on the loop, as the command line's are
(``inspector/workflows/sweeps.py``). Finished runs only mark the report stale: a timer rebuilds
it at most every ``slice_ms`` (one ``build_report`` over the store's rows), so 8 runs finishing
at once cost one refresh, not 8. Cancel cancels the task: runs in flight end ``cancelled``, the
finished ones stay and count.

Why not only the timer: qasync runs every ready callback as a zero-delay Qt timer, and while runs
stream without waiting on the network (scripted, replayed) Qt's timers with a delay do not fire
at all. So a finished run applies the results itself once ``slice_ms`` has passed since the last
refresh; the timer catches the rest (the last runs, the ETA while runs wait on a server)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.app.runtime.notifier import Notifier
from inspector.core.errors import InspectorError, last_line
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario
from inspector.store import Store
from inspector.sweeps import Job, Progress, RunFacts, SweepReport, SweepSpec, build_report
from inspector.sweeps.cost import run_cost
from inspector.sweeps.grid import build_arms, refuse_credentials
from inspector.sweeps.report import counted
from inspector.workflows.sweeps import (
    FACTS,
    arm_scenarios,
    jobs_for,
    new_sweep_id,
    now_utc,
    run_sweep,
    scenario_ref,
)

SLICE_MS = 200  # the most often the table and charts are rebuilt while runs stream


def _prepare(spec: SweepSpec) -> list[Scenario]:
    """Off the UI thread: every arm's scenario checked, and the price table loaded (the first
    report would otherwise load it on the UI thread: ~90 ms, bench/sweep_window.py)."""
    scenarios = arm_scenarios(spec)
    for scenario in scenarios:
        run_cost(scenario.model.name, scenario.model.provider, 1, 1)
    return scenarios


class SweepController(QObject):
    reportChanged = Signal(object)  # SweepReport | None
    progressChanged = Signal(str)  # "done/total runs · failed · elapsed · ETA"
    runningChanged = Signal(bool)
    runsChanged = Signal()  # runs were recorded: the runs list may read the store again
    armRunsShown = Signal(object)  # run ids: the runs list shows only these (None: all)
    compareRequested = Signal(list)  # run ids, one per arm
    sweepsChanged = Signal()  # a sweep was stored

    def __init__(
        self,
        store: Store,
        notifier: Notifier,
        parent: QObject | None = None,
        slice_ms: int = SLICE_MS,
    ) -> None:
        super().__init__(parent)
        self.store, self.notifier = store, notifier
        self.report: SweepReport | None = None
        self.progress: Progress | None = None
        self._facts: list[RunFacts] = []
        self._sweep_id: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._stale = False
        self._slice_s = slice_ms / 1000
        self._refreshed = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(slice_ms)
        self._timer.timeout.connect(self._tick)

    @property
    def running(self) -> bool:
        return self._task is not None

    @property
    def sweep_id(self) -> str | None:
        return self._sweep_id

    # ---- starting, cancelling ----------------------------------------------------------------

    def start(self, scenario: str, varies: Sequence[str], repeat: int, concurrency: int) -> bool:
        """Checks the grid and starts the sweep; a bad grid is one line in the message bar."""
        if self.running:
            return False
        try:
            arms = build_arms([v for v in varies if v.strip()], [], Path("."))
            refuse_credentials([o for a in arms for o in a.overrides])
            spec = SweepSpec(
                scenario=scenario_ref(scenario),
                arms=arms,
                repeat=repeat,
                seed=random.randrange(2**31),
                baseline=arms[0].name,
                concurrency=concurrency,
            )
        except (InspectorError, ValueError) as exc:
            self.notifier.show_message("error", last_line(exc))
            return False
        self.notifier.clear()
        self._task = asyncio.ensure_future(self._run(spec))
        self.runningChanged.emit(True)
        return True

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self, spec: SweepSpec) -> None:
        cancelled = False
        try:
            scenarios = await asyncio.to_thread(_prepare, spec)
            sweep_id = new_sweep_id()
            self.store.create_sweep(
                sweep_id, scenarios[0].name, now_utc(), spec.model_dump(mode="json")
            )
            self._sweep_id = sweep_id
            self.sweepsChanged.emit()
            jobs = jobs_for(spec, scenarios, spec.slots())
            self.progress = Progress(total=len(jobs), started=time.perf_counter())
            self._refresh()
            self._timer.start()
            await run_sweep(self.store, sweep_id, spec, jobs, progress=self._finished)
        except asyncio.CancelledError:
            cancelled = True
        except InspectorError as exc:
            self.notifier.show_message("error", last_line(exc))
        finally:
            self._timer.stop()
            self._task = None
            if self._sweep_id is not None:
                self._refresh()
                self.runsChanged.emit()
            self.runningChanged.emit(False)
        if self.report is not None and self._sweep_id is not None:
            done = f"{self.report.runs}/{self.report.expected} runs"
            self.notifier.show_status(
                f"Sweep {self._sweep_id} cancelled: {done} kept"
                if cancelled
                else f"Sweep {self._sweep_id} finished: {done}"
            )

    def _finished(self, _job: Job, record: RunRecord) -> None:
        if self.progress is not None:
            self.progress.add(record)
        self._stale = True  # applied with whatever else finishes within the slice
        if time.perf_counter() - self._refreshed >= self._slice_s:
            self._tick()

    def _tick(self) -> None:
        if self._stale:
            self._stale = False
            self._refresh()
            self.runsChanged.emit()
        elif self.progress is not None:  # the elapsed time and the ETA move on
            self.progressChanged.emit(self.progress.line(time.perf_counter()))

    def _refresh(self) -> None:
        if self._sweep_id is None:
            return
        self._refreshed = time.perf_counter()
        try:
            sweep = self.store.sweep(self._sweep_id)
            self._facts = FACTS.validate_python(self.store.sweep_runs(sweep.sweep_id))
            spec = SweepSpec.model_validate(sweep.spec)
            self.report = build_report(sweep.sweep_id, sweep.created_at, spec, self._facts)
        except InspectorError as exc:
            self.notifier.show_message("error", f"Cannot read sweep {self._sweep_id}: {exc}")
            return
        self.reportChanged.emit(self.report)
        if self.progress is not None:
            self.progressChanged.emit(self.progress.line(time.perf_counter()))

    # ---- stored sweeps -----------------------------------------------------------------------

    def stored(self) -> list[tuple[str, str]]:
        """(sweep id, label) of every stored sweep, newest first."""
        try:
            return [
                (s.sweep_id, f"{s.sweep_id} · {s.scenario} · {s.created_at[:16]}")
                for s in self.store.sweeps()
            ]
        except InspectorError as exc:
            self.notifier.show_message("error", f"Cannot list the sweeps: {exc}")
            return []

    def open_sweep(self, sweep_id: str) -> None:
        """Shows a stored sweep's statistics (not while one runs)."""
        if self.running:
            return
        self._sweep_id, self.progress = sweep_id, None
        self._refresh()

    # ---- arms to runs ------------------------------------------------------------------------

    def arm_runs(self, row: int) -> list[str]:
        """The arm's counted runs, by repetition."""
        runs = counted(self._facts)
        return [runs[k].run_id for k in sorted(runs) if k[0] == row]

    def show_arm(self, row: int) -> None:
        self.armRunsShown.emit(self.arm_runs(row))

    def show_all(self) -> None:
        self.armRunsShown.emit(None)

    def compare_arms(self, rows: Sequence[int]) -> None:
        """The first counted run of each arm (2–4 arms) in Compare."""
        firsts = [runs[0] for runs in (self.arm_runs(r) for r in rows) if runs]
        if 2 <= len(firsts) <= 4:
            self.compareRequested.emit(firsts)
        else:
            self.notifier.show_status("Select 2–4 arms with finished runs to compare", 4000)
