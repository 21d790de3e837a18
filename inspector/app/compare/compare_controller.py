"""Comparing in the window (``CompareController``): "Compare selected runs" (Ctrl+D) and
``compare(run_ids)``, which reads the records and builds the comparison off the UI thread, then
shows it in its ``CompareView``. It touches the runner, the ``RunFocus`` (to refuse a run still
recording), the store's path and a notifier; the window puts the view in its Compare tab, the
action in its menus, and brings the tab to the front on ``shown`` (the timeline's on
``timelineRequested``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from inspector.app.compare.compare_view import CompareView
from inspector.app.runtime.latest_read import LatestRead
from inspector.app.runtime.notifier import Notifier
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.runtime.runner import TurnRunner
from inspector.core.records import RunRecord
from inspector.reports.compare import Comparison
from inspector.workflows.compare import different_scenarios, load_comparison

__all__ = ["COMPARE_KEYS", "CompareController", "count_problem", "load_comparison"]

MIN_RUNS, MAX_RUNS = 2, 4
COMPARE_KEYS = "Ctrl+D"


def count_problem(run_ids: list[str]) -> str | None:
    if len(run_ids) < MIN_RUNS:
        return (
            f"Select {MIN_RUNS}–{MAX_RUNS} runs to compare (Ctrl+click or Shift+click in the "
            f"runs list); {len(run_ids) or 'none'} selected."
        )
    if len(run_ids) > MAX_RUNS:
        return f"Compare at most {MAX_RUNS} runs at a time; {len(run_ids)} selected."
    return None


class CompareController(QObject):
    shown = Signal()  # a comparison landed in the view
    timelineRequested = Signal()  # the user moved on to one run: the timeline to the front

    def __init__(
        self,
        runner: TurnRunner,
        focus: RunFocus,
        store_path: Path,
        notify: Notifier,
        selected_runs: Callable[[], list[str]],
        parent: QWidget,
    ) -> None:
        """``selected_runs``: the runs selected in the runs list, oldest first (the baseline)."""
        super().__init__(parent)
        self._runner, self._focus, self._path, self._notify = runner, focus, store_path, notify
        self._selected_runs = selected_runs
        self.view = CompareView()
        self._read: LatestRead[tuple[list[RunRecord], Comparison]] = LatestRead(notify)
        self.action = QAction("Co&mpare selected runs", parent)
        self.action.setShortcut(QKeySequence(COMPARE_KEYS))
        self.action.setToolTip(f"Compare 2–4 runs of one turn side by side ({COMPARE_KEYS})")
        self.action.triggered.connect(self.compare_selected)

    def actions(self) -> dict[str, QAction]:
        return {"compare": self.action}

    def compare_selected(self) -> None:
        self.compare(self._selected_runs())

    def compare(self, run_ids: list[str]) -> None:
        """Compares 2–4 recorded runs (the first is the baseline); the records are read off the
        UI thread."""
        run_ids = list(dict.fromkeys(run_ids))
        problem = count_problem(run_ids)
        if problem is None:
            problem = self._recording_problem(run_ids)
        if problem is not None:
            self._notify.show_message("warning", problem)
            return
        self._notify.clear()
        self._read.start(
            f"Comparing {len(run_ids)} runs…",
            partial(load_comparison, self._path, run_ids),
            self._loaded,
            "Cannot compare",
        )

    def _recording_problem(self, run_ids: list[str]) -> str | None:
        live = self._focus.live
        if self._runner.busy and live is not None and live.run_id in run_ids:
            return f"Run {live.run_id} is still recording; compare it once it has finished."
        return None

    def _loaded(self, loaded: tuple[list[RunRecord], Comparison]) -> None:
        records, comparison = loaded
        self.view.show_comparison(records, comparison)
        self.shown.emit()
        names = different_scenarios(records, id_chars=8)
        if names is not None:
            self._notify.show_message(
                "warning", f"These runs are not the same turn ({names}): compared anyway."
            )

    def show_timeline(self) -> None:
        self._read.drop()  # the user moved on: a comparison still being read must not land
        self.timelineRequested.emit()
