"""``FormatsController``: File › Import…, Send to collector… and Save as scenario…. Reading,
storing, pushing and writing run on a worker thread (``asyncio.to_thread``): a large trace or a
slow collector never stalls the window. Every problem is one line in the message bar.

Inputs: the store path, a notifier, the run the views show (a callable); the file and collector
questions are attributes (tests answer them). Talks back through ``runImported`` (select and
show it) and ``scenarioSaved`` (the window offers to open it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from inspector.app.formats.collector_dialog import ask_collector
from inspector.app.runtime.notifier import Notifier
from inspector.core.errors import InspectorError
from inspector.formats.otlp_push import parse_headers
from inspector.workflows.imports import (
    fidelity_line,
    import_into,
    push_run,
    scenario_text,
    write_scenario,
)

__all__ = ["FormatsController"]

IMPORT_FILTER = "Traces and histories (*.json *.jsonl);;All files (*)"
SCENARIO_FILTER = "Scenarios (*.toml)"


def _open_file(parent: QWidget | None) -> str:
    return QFileDialog.getOpenFileName(parent, "Import runs", "", IMPORT_FILTER)[0]


def _save_file(parent: QWidget | None, suggested: str) -> str:
    return QFileDialog.getSaveFileName(parent, "Save as scenario", suggested, SCENARIO_FILTER)[0]


def _open_saved(parent: QWidget | None, path: str) -> bool:
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent,
        "Scenario saved",
        f"Saved {path}.\n\nOpen it now (to run it, or edit its policy)?",
        buttons.Open | buttons.Close,
        buttons.Open,
    )
    return answer == buttons.Open


class FormatsController(QObject):
    runImported = Signal(str)  # run_id of the (first) imported run
    scenarioSaved = Signal(str)  # the scenario file written
    openRequested = Signal(str)  # the user chose to open the scenario just saved

    def __init__(
        self,
        store_path: str | Path,
        notifier: Notifier,
        shown_run_id: Callable[[], str | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._store_path = store_path
        self._notifier = notifier
        self._shown_run_id = shown_run_id
        self._parent = parent
        self.ask_open: Callable[[QWidget | None], str] = _open_file
        self.ask_save: Callable[[QWidget | None, str], str] = _save_file
        self.ask_open_saved: Callable[[QWidget | None, str], bool] = _open_saved
        self.ask_collector = ask_collector
        self.endpoint = ""  # the last collector's, for this session only
        self.tasks: set[asyncio.Task[object]] = set()
        self.import_action = QAction("&Import…", self)
        self.import_action.setToolTip("OTLP/JSON trace, Pydantic AI history or OpenAI JSONL log")
        self.import_action.triggered.connect(self.import_file)
        self.send_action = QAction("Send to &collector…", self)
        self.send_action.setToolTip("Push the shown run's spans to an OTLP/HTTP collector")
        self.send_action.triggered.connect(self.send_to_collector)
        self.save_action = QAction("Save as sc&enario…", self)
        self.save_action.setToolTip("A scenario file that replays the shown run offline")
        self.save_action.triggered.connect(self.save_as_scenario)

    def actions(self) -> dict[str, QAction]:
        return {
            "import": self.import_action,
            "send_collector": self.send_action,
            "save_scenario": self.save_action,
        }

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        task = asyncio.get_event_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _run_id(self, what: str) -> str | None:
        run_id = self._shown_run_id()
        if run_id is None:
            self._notifier.show_message("warning", f"{what}: pick a recorded run first.")
        return run_id

    # ---- Import ---------------------------------------------------------------------------------

    def import_file(self) -> None:
        path = self.ask_open(self._parent)
        if path:
            self._spawn(self.import_path(Path(path)))

    async def import_path(self, path: Path) -> str | None:
        """Stores the runs of ``path``; the first one's id, or None (one line said why)."""
        self._notifier.show_status(f"Importing {path.name}…")
        try:
            records = await asyncio.to_thread(import_into, path, self._store_path)
        except InspectorError as exc:
            self._notifier.clear_status()
            self._notifier.show_message("error", str(exc))
            return None
        self._notifier.clear_status()
        first = records[0]
        more = f" (and {len(records) - 1} more run(s))" if len(records) > 1 else ""
        self._notifier.show_message("info", fidelity_line(first) + more)
        self.runImported.emit(first.run_id)
        return first.run_id

    # ---- Send to collector ----------------------------------------------------------------------

    def send_to_collector(self) -> None:
        run_id = self._run_id("Send to collector")
        if run_id is None:
            return
        answer = self.ask_collector(self._parent, self.endpoint)
        if answer is not None:
            self._spawn(self.send(run_id, *answer))

    async def send(self, run_id: str, endpoint: str, header_lines: list[str]) -> bool:
        self.endpoint = endpoint
        try:
            headers = parse_headers(header_lines)
            self._notifier.show_status(f"Sending run {run_id} to {endpoint}…")
            count = await asyncio.to_thread(push_run, self._store_path, run_id, endpoint, headers)
        except InspectorError as exc:
            self._notifier.clear_status()
            self._notifier.show_message("error", str(exc).replace("--header", "header"))
            return False
        self._notifier.clear_status()
        self._notifier.show_message("info", f"Sent run {run_id} to {endpoint}: {count} span(s)")
        return True

    # ---- Save as scenario -----------------------------------------------------------------------

    def save_as_scenario(self) -> None:
        run_id = self._run_id("Save as scenario")
        if run_id is None:
            return
        path = self.ask_save(self._parent, f"run-{run_id[:8]}.toml")
        if path:
            self._spawn(self.save(run_id, Path(path)))

    async def save(self, run_id: str, path: Path) -> bool:
        try:
            text = await asyncio.to_thread(scenario_text, self._store_path, run_id)
            await asyncio.to_thread(write_scenario, path, text)
        except InspectorError as exc:
            self._notifier.show_message("error", str(exc))
            return False
        self._notifier.show_status(f"Saved run {run_id} as {path}", 5000)
        self.scenarioSaved.emit(str(path))
        if self.ask_open_saved(self._parent, str(path)):
            self.openRequested.emit(str(path))
        return True
