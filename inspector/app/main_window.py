"""The inspector window: scenarios and recorded runs on the left, the step timeline in the
centre, the step in detail / the attempts side by side / the policy of the next run on the right.

It composes the views and wires them to the ``TurnRunner`` and the store. Every engine event
goes to the ``LiveRun`` first, then to the views showing that run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QScrollArea,
    QStyle,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from inspector.app.about import show_about
from inspector.app.attempts_view import AttemptsView
from inspector.app.compare_window import install_compare
from inspector.app.gui_collector import collection_held, settle_loaded
from inspector.app.icons import app_icon
from inspector.app.library_panel import LibraryPanel
from inspector.app.local_model_control import LocalModelControl
from inspector.app.message_bar import Level, MessageBar
from inspector.app.playback import install_playback
from inspector.app.policy_panel import PolicyPanel
from inspector.app.provider_settings import ProviderSettingsDialog
from inspector.app.replay_control import install_replay
from inspector.app.run_status import RunStatus
from inspector.app.runner import TurnRunner
from inspector.app.scenario_editor import install_scenario_editor
from inspector.app.step_detail import StepDetail
from inspector.app.timeline_view import TimelineView
from inspector.app.unsaved_edits import ask_discard, unsaved_edits
from inspector.app.validators_dock import install_validators_dock
from inspector.app.welcome import FIRST_DEMO, WelcomePanel
from inspector.core.errors import InspectorError
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Step, Usage
from inspector.resources import DEMO_PREFIX, demo_names, resolve_scenario
from inspector.store import RunStillRecording, RunSummary, Store

TITLE = "Agent Inspector"
SCENARIO_FILTER = "Scenarios (*.toml);;All files (*)"
# While a run streams, its steps so far are frozen out of the collector's scans every so many
# steps: full collections otherwise walk all of them, ever longer (400 ms at 100,000 steps).
SETTLE_EVERY = 1_000
NEWEST_RUNS = 20  # runs re-read when one starts or ends (others may be recording meanwhile)


def run_title(run: LiveRun) -> str:
    """The line above the timeline: which run this is and how it ended (or that it runs)."""
    header, record = run.header, run.record
    scenario = record.scenario if record else header.scenario if header else "run"
    parts = [f"<b>{scenario}</b>", f"run {run.run_id}"]
    if record is None:
        parts.append("running…")
    else:
        ended = record.status + (
            f" ({record.termination.replace('_', ' ')})" if record.termination else ""
        )
        steps, attempts = len(record.steps), record.budgets.attempts_used
        parts += [
            ended,
            f"{steps} step{'s' * (steps != 1)}",
            f"{attempts} attempt{'s' * (attempts != 1)}",
        ]
        if record.replay_of:
            parts.append(f"replay of {record.replay_of}")
    return " · ".join(parts)


def load_stored_run(path: Path, run_id: str) -> LiveRun:
    """Reads run ``run_id`` and folds it into a ``LiveRun`` (on a worker thread, with its own
    ``Store``: one per thread). A run another process is still recording: what it has so far."""
    with Store.open(path) as store:
        try:
            return LiveRun.from_record(store.load(run_id))
        except RunStillRecording:
            partial = LiveRun()
            for stored in store.events(run_id):
                partial.apply(stored.event)
            return partial


def read_runs(path: Path) -> list[RunSummary]:
    """Every run's summary, newest first (on a worker thread, with its own ``Store``)."""
    with Store.open(path) as store:
        return store.runs()


def record_problem(record: RunRecord) -> str | None:
    """What to tell the user about a finished run that did not succeed (None: nothing)."""
    if record.status in ("succeeded", "fallback"):
        return None
    reason = (record.termination or "").replace("_", " ")
    text = f"Run {record.run_id} {record.status}" + (f" ({reason})" if reason else "")
    return f"{text}: {record.error.message}" if record.error else text


def _usage(run: LiveRun) -> Usage:
    if run.record is not None:
        return run.record.usage
    steps = [s.step for s in run.steps if s.step is not None and s.step.response is not None]
    return Usage(
        input_tokens=sum(s.response.usage.input_tokens for s in steps if s.response),
        output_tokens=sum(s.response.usage.output_tokens for s in steps if s.response),
    )


class RunningUsage:
    """The tokens a run has used so far, summed as its steps finish: O(1) a step (summing the
    whole run at each step made a 100,000-step run quadratic)."""

    def __init__(self) -> None:
        self._run: LiveRun | None = None
        self._usage = Usage()

    def after(self, run: LiveRun, step: Step) -> Usage:
        """The usage of ``run`` once ``step`` (just folded into it) finished."""
        if run is not self._run:  # another run: summed once from its steps
            self._run, self._usage = run, _usage(run)
        elif step.response is not None:
            self._usage = self._usage + step.response.usage
        return self._usage


class MainWindow(QMainWindow):
    def __init__(
        self, store: Store, runner: TurnRunner | None = None, *, first_run: bool = False
    ) -> None:
        """``first_run``: nothing was ever recorded; open on the demos with the welcome page."""
        super().__init__()
        self.store = store
        self.runner = runner or TurnRunner(store, parent=self)
        self.local_model = LocalModelControl(self)
        self.local_model_url: str | None = None  # the running local model's, once known
        self.setWindowTitle(TITLE)
        self.setWindowIcon(app_icon())
        self.live: LiveRun | None = None  # the run in flight (or the last one started here)
        self.shown: LiveRun | None = None  # the run the views show
        self.selected_step: int | None = None
        self._following = False  # selecting the newest step of a run streaming in
        self._tokens = RunningUsage()  # of the run streaming in (or played back)
        self._loading: str | None = None  # the stored run being read off-thread for the views
        self._load_task: asyncio.Task[None] | None = None
        self.ask_discard = ask_discard  # asked on quitting with unsaved edits (tests answer it)

        self.library = LibraryPanel(demo_names())
        self.timeline = TimelineView()
        self.detail = StepDetail()
        self.attempts = AttemptsView()
        self.policy = PolicyPanel()
        self.message_bar = MessageBar()
        self.run_heading = QLabel(
            "Choose a scenario and press Run (Ctrl+R), or pick a recorded run."
        )
        self.run_heading.setObjectName("runHeading")
        self.run_heading.setTextFormat(Qt.TextFormat.RichText)
        self.welcome = WelcomePanel()
        self.welcome.hide()

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.message_bar)
        # The centre is tabbed: "Timeline" (this page) and "Compare" (added by compare_window).
        self.timeline_page = QWidget()
        page = QVBoxLayout(self.timeline_page)
        page.setContentsMargins(0, 0, 0, 0)
        page.addWidget(self.welcome, 1)
        page.addWidget(self.run_heading)
        page.addWidget(self.timeline, 1)
        self.centre_tabs = QTabWidget()
        self.centre_tabs.setObjectName("centreTabs")
        self.centre_tabs.setDocumentMode(True)
        self.centre_tabs.addTab(self.timeline_page, "Timeline")
        layout.addWidget(self.centre_tabs, 1)
        self.setCentralWidget(central)
        self._build_docks()
        self._build_actions()
        self.status = RunStatus(self.statusBar(), self)
        self.local_model_label = QLabel(self)
        self.local_model_label.setObjectName("localModelUrl")
        self.local_model_label.hide()
        self.statusBar().addPermanentWidget(self.local_model_label)

        self.library.scenarioChosen.connect(self.choose_scenario)
        self.library.runChosen.connect(self.show_stored_run)
        self.timeline.stepSelected.connect(self._step_selected)
        self.runner.preparing.connect(self._preparing)
        self.runner.engineEvent.connect(self._on_event)
        self.runner.finished.connect(self._finished)
        self.runner.failed.connect(self._failed)
        self.runner.busyChanged.connect(self._busy)
        self.welcome.demoRequested.connect(self.run_demo)
        self.welcome.settingsRequested.connect(self.open_provider_settings)
        self.welcome.dismissed.connect(self.hide_welcome)
        self.local_model.busyChanged.connect(self._local_model_busy)
        self.local_model.progress.connect(self._local_model_progress)
        self.local_model.running.connect(self._local_model_running)
        self.local_model.notRunning.connect(self._local_model_not_running)
        self.local_model.failed.connect(self._local_model_failed)
        # After the runner's connections above: a replay's summary is the message left showing.
        self.replay = install_replay(self)
        self.playback = install_playback(self)
        self.compare = install_compare(self)
        self.validators = install_validators_dock(self)  # re-validation on every save
        self.scenario_editor, self.scenario_dock = install_scenario_editor(self)
        self._busy(False)
        self._runs_task: asyncio.Task[None] | None = None
        self.list_runs_soon()
        if first_run:
            self.library.select_scenario(f"{DEMO_PREFIX}{FIRST_DEMO}")
            self.show_welcome()

    # ---- layout ---------------------------------------------------------------------------

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        left, right = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea
        self.library_dock = self._dock("Scenarios and runs", "libraryDock", self.library, left)
        self.detail_dock = self._dock("Step", "stepDock", self.detail, right)
        # Its columns want ~600 px; scrolled, they no longer set the width of the whole dock area.
        attempts_scroll = QScrollArea()
        attempts_scroll.setWidgetResizable(True)
        attempts_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        attempts_scroll.setWidget(self.attempts)
        self.attempts_dock = self._dock(
            "Attempts side by side", "attemptsDock", attempts_scroll, right
        )
        self.policy_dock = self._dock("Policy", "policyDock", self.policy, right)
        self.setTabPosition(Qt.DockWidgetArea.RightDockWidgetArea, QTabWidget.TabPosition.North)
        self.tabifyDockWidget(self.detail_dock, self.attempts_dock)
        self.tabifyDockWidget(self.attempts_dock, self.policy_dock)
        self.detail_dock.raise_()
        self._docks_sized = False

    def _action(self, text: str, keys: list[str], slot: object, tip: str = "") -> QAction:
        action = QAction(text, self)
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.setToolTip(f"{tip or text} ({', '.join(keys)})" if keys else tip or text)
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work wherever the focus is in the window
        return action

    def _build_actions(self) -> None:
        style = self.style()
        self.open_action = self._action("&Open scenario…", ["Ctrl+O"], self.open_scenario)
        self.open_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_DialogOpenButton))
        self.run_action = self._action("&Run", ["Ctrl+R"], self.run_turn, "Run the scenario")
        self.run_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self.stop_action = self._action("&Stop", ["Esc", "Ctrl+."], self.stop_turn, "Stop the run")
        self.stop_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_MediaStop))
        self.show_cleared_action = self._action(
            "Show &cleared attempts", ["Ctrl+H"], self._toggle_cleared,
            "Show the attempts a streaming UI showed and then cleared",
        )  # fmt: skip
        self.show_cleared_action.setCheckable(True)
        self.show_cleared_action.setChecked(True)
        self.timeline.show_cleared_box.toggled.connect(self.show_cleared_action.setChecked)
        self.filter_action = self._action(
            "&Filter runs", ["Ctrl+F"], lambda: self.library.filter_box.setFocus()
        )
        self.timeline_action = self._action(
            "Focus the &timeline", ["Ctrl+L"], lambda: self.timeline.table.setFocus()
        )
        quit_action = self._action("&Quit", ["Ctrl+Q"], self.close)
        self.settings_action = self._action(
            "&Provider settings…", [], self.open_provider_settings, "API keys in the OS keyring"
        )
        self.local_start_action = self._action(
            "&Start", [], self.local_model.start, "Start the local llama.cpp model server"
        )
        self.local_stop_action = self._action(
            "S&top", [], self.local_model.stop, "Stop the local model server"
        )
        self.local_status_action = self._action(
            "Status", [], self.local_model.refresh, "Is the local model server running?"
        )
        self.welcome_action = self._action("&Welcome page", [], self.show_welcome)
        self.about_action = self._action("&About Agent Inspector", [], self.show_about)

        toolbar = QToolBar("Run", self)
        toolbar.setObjectName("runToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for action in (self.open_action, self.run_action, self.stop_action):
            toolbar.addAction(action)
        self.addToolBar(toolbar)

        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        # Kept: the feature modules (compare, replay, playback) add their actions to these.
        self.run_menu = menu.addMenu("&Run")
        self.run_menu.addActions([self.run_action, self.stop_action])
        self.view_menu = view_menu = menu.addMenu("&View")
        view_menu.addActions([self.show_cleared_action, self.filter_action, self.timeline_action])
        view_menu.addSeparator()
        for dock in (self.library_dock, self.detail_dock, self.attempts_dock, self.policy_dock):
            view_menu.addAction(dock.toggleViewAction())
        self.toolbar = toolbar
        self.local_model_menu = menu.addMenu("&Local model")
        self.local_model_menu.addActions(
            [self.local_start_action, self.local_stop_action, self.local_status_action]
        )
        help_menu = menu.addMenu("&Help")
        help_menu.addActions([self.welcome_action, self.about_action])

    # ---- intents ---------------------------------------------------------------------------

    def open_scenario(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", SCENARIO_FILTER)
        if path:
            self.library.select_scenario(path)

    def choose_scenario(self, ref: str) -> None:
        """Loads ``ref`` into the policy panel (its own policy and model, no edits)."""
        self.message_bar.clear()
        try:
            scenario = resolve_scenario(ref)
        except InspectorError as exc:
            self.policy.set_scenario(None)
            self.scenario_editor.set_scenario(ref, None)  # shows the file, to fix it in place
            self.validators.set_scenario(ref)  # says why, where the validators would be
            self.message_bar.show_message("error", str(exc))
            return
        self.policy.set_scenario(scenario)
        self.scenario_editor.set_scenario(ref, scenario)
        self.validators.set_scenario(ref, scenario)
        self.status.show_identity(scenario.model.provider, scenario.model.name)
        self.setWindowTitle(f"{scenario.name} — {TITLE}")

    def run_turn(self) -> None:
        ref = self.library.current_scenario()
        if ref is None:
            self.message_bar.show_message("info", "Choose a scenario to run first.")
            return
        if self.runner.busy:
            return
        if self.policy.scenario is None:  # it did not load: the runner says why, in the window
            self.runner.start(ref)
            return
        errors = self.policy.errors()
        if errors:
            self.policy_dock.raise_()
            lines = "; ".join(f"{field}: {message}" for field, message in errors.items())
            self.message_bar.show_message("error", f"The policy has invalid values: {lines}")
            return
        edit_errors = self.scenario_editor.errors()
        if edit_errors:
            self.scenario_dock.raise_()
            problem = next(iter(edit_errors.values()))
            self.message_bar.show_message("error", f"The scenario edits cannot run: {problem}")
            return
        self.runner.start(ref, self.policy.overrides() + self.scenario_editor.overrides())

    def stop_turn(self) -> None:
        self.runner.stop()

    def run_demo(self, ref: str) -> None:
        """The welcome page's demo links: select ``ref`` in the library and run it."""
        if self.library.select_scenario(ref):
            self.hide_welcome()
            self.run_turn()

    def show_welcome(self) -> None:
        self.welcome.show()
        self.run_heading.hide()
        self.timeline.hide()

    def hide_welcome(self) -> None:
        self.welcome.hide()
        self.run_heading.show()
        self.timeline.show()

    def show_about(self) -> QWidget:
        return show_about(self)

    def open_provider_settings(self) -> QWidget:
        dialog = ProviderSettingsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def play_back(self, run_id: str) -> None:
        """Plays recorded run ``run_id`` back into the views, without a model (app/playback.py)."""
        self.playback.play_back(run_id)

    def compare_runs(self, run_ids: list[str]) -> None:
        """Compares 2–4 recorded runs (the first is the baseline) in the Compare tab; the records
        are read off the UI thread (app/compare_window.py)."""
        self.compare.compare(run_ids)

    def show_stored_run(self, run_id: str) -> None:
        """Shows a recorded run, read and folded off the UI thread (a 30,000-step run takes
        seconds); a load the user has since moved away from is dropped when it arrives."""
        self._loading = run_id
        if self.live is not None and self.live.run_id == run_id:
            self._loading = None
            self._show(self.live)
            return
        self.hide_welcome()
        self.run_heading.setText(f"Loading run {run_id}…")
        self.statusBar().showMessage(f"Loading run {run_id}…")
        self._load_task = asyncio.get_event_loop().create_task(self._load_stored(run_id))

    async def _load_stored(self, run_id: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            with collection_held():  # until settle_loaded() below freezes what it built
                run = await loop.run_in_executor(None, load_stored_run, self.store.path, run_id)
        except InspectorError as exc:
            if self._loading == run_id:
                self._loading = None
                self.statusBar().clearMessage()
                self.run_heading.setText(f"Run {run_id} could not be loaded.")
                self.message_bar.show_message("error", str(exc))
            return
        if self._loading != run_id:
            return  # the user picked something else meanwhile
        self._loading = None
        self.statusBar().clearMessage()
        self._show(run)
        settle_loaded()  # its objects out of the collector's scans: no pauses with it shown

    def list_runs_soon(self) -> None:
        """``refresh_runs`` with the store read on a worker thread (its own ``Store``): reading
        100,000 runs takes ~0.4 s; listing them then takes one step of ~40 ms."""
        self._runs_task = asyncio.get_event_loop().create_task(self._list_runs())

    async def _list_runs(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            runs = await loop.run_in_executor(None, read_runs, self.store.path)
        except InspectorError as exc:
            self.message_bar.show_message("error", f"Cannot list the recorded runs: {exc}")
            return
        keep = self._shown_run_id()
        self.library.set_runs(runs, keep=keep)
        self.note_runs(keep=keep)  # runs that started or ended while the list was read

    def refresh_runs(self, keep: str | None = None) -> None:
        try:
            runs = self.store.runs()
        except InspectorError as exc:
            self.message_bar.show_message("error", f"Cannot list the recorded runs: {exc}")
            return
        self.library.set_runs(runs, keep=keep)

    def note_runs(self, keep: str | None = None) -> None:
        """``refresh_runs`` when a run starts or ends: only the store's newest runs are read
        (an indexed query) and merged into the list; the whole list is read again only when
        they are not the newest it shows."""
        try:
            newest = self.store.runs(limit=NEWEST_RUNS)
        except InspectorError as exc:
            self.message_bar.show_message("error", f"Cannot list the recorded runs: {exc}")
            return
        if not self.library.merge_runs(newest, keep=keep):
            self.refresh_runs(keep=keep)

    # ---- showing runs ----------------------------------------------------------------------

    def show_run(self, run: LiveRun) -> None:
        """Shows ``run`` (playback's, or any run folded elsewhere) instead of a stored run still
        loading."""
        self._loading = None
        self._show(run)

    def _show(self, run: LiveRun) -> None:
        self.hide_welcome()
        self.shown = run
        self.selected_step = None
        self.timeline.show_run(run)
        self.attempts.show_run(run)
        self.run_heading.setText(run_title(run))
        if run.record is not None:
            self.status.show_record(run.record)
        if run.steps:
            self.timeline.select_last()
        self.validators.show_run(run)  # its flips from the last re-validation, if any

    def _step_selected(self, index: int) -> None:
        self.selected_step = index
        if self.shown is not None:
            self.detail.show_step(self.shown, index, soon=self._following)

    def _toggle_cleared(self) -> None:
        self.timeline.set_show_cleared(self.show_cleared_action.isChecked())

    # ---- the local model -------------------------------------------------------------------

    def _local_model_busy(self, busy: bool) -> None:
        for action in (self.local_start_action, self.local_stop_action, self.local_status_action):
            action.setEnabled(not busy)

    def _local_model_progress(self, line: str) -> None:
        self.statusBar().showMessage(f"Local model: {line}")

    def _local_model_running(self, url: str) -> None:
        self.statusBar().clearMessage()
        self._set_local_model_url(url)
        self.message_bar.show_message(
            "info",
            f"Local model running at {url}. Choose the “Local llama.cpp” provider preset in the "
            "Policy tab, or run demo:local-model.",
        )

    def _local_model_not_running(self, message: str) -> None:
        self.statusBar().clearMessage()
        self._set_local_model_url(None)
        self.message_bar.show_message("info", message)

    def _local_model_failed(self, message: str) -> None:
        self.statusBar().clearMessage()
        self.message_bar.show_message("error", message)

    def _set_local_model_url(self, url: str | None) -> None:
        self.local_model_url = url
        self.policy.set_local_model_url(url)
        self.local_model_label.setText(f"Local model: {url}" if url else "")
        self.local_model_label.setVisible(url is not None)

    # ---- the runner's signals --------------------------------------------------------------

    def _busy(self, busy: bool) -> None:
        self.run_action.setEnabled(not busy)
        self.stop_action.setEnabled(busy)
        self.status.running(busy)

    def _preparing(self, ref: str) -> None:
        self.message_bar.clear()
        self.hide_welcome()
        self.statusBar().showMessage(f"Starting {ref}…")

    def _on_event(self, event: Event) -> None:
        if event.kind == "run_started":
            self._loading = None  # the new run takes the views over a stored one still loading
            self.live = LiveRun()
            self.live.apply(event)
            self.status.show_identity(event.provider, event.model)
            self.status.show_usage(Usage())
            self._show(self.live)
            self.note_runs(keep=event.run_id)  # the store has its row now
            self.statusBar().showMessage(f"Running {event.scenario}…")
            return
        live = self.live
        if live is None or event.run_id != live.run_id:
            return
        live.apply(event)
        self.present(live, event)
        if event.kind == "step_finished" and event.step.index % SETTLE_EVERY == 0:
            settle_loaded()  # a long run's steps so far out of the collector's scans

    def present(self, run: LiveRun, event: Event) -> None:
        """Feeds ``event``, already folded into ``run``, to the views if they show ``run`` (the
        live run's path, which playback takes too)."""
        if self.shown is not run:
            return  # the user is looking at another run; this one keeps folding
        self.timeline.on_event(event)
        self.detail.on_event(event)
        self.attempts.on_event(event)
        if event.kind == "step_started" and self.selected_step in (None, event.index - 1):
            self._following = True  # the detail renders the newest step once per interval
            try:
                self.timeline.select_last()  # follow the stream unless the user looks elsewhere
            finally:
                self._following = False
        elif event.kind == "step_finished":
            self.status.show_usage(self._tokens.after(run, event.step))

    def _finished(self, record: RunRecord) -> None:
        settle_loaded()  # the finished run's objects out of the collector's scans
        self.statusBar().showMessage(f"Run {record.run_id} {record.status}", 5000)
        self.note_runs(keep=self._shown_run_id() or record.run_id)
        if self.live is not None and self.live.run_id == record.run_id and self.shown is self.live:
            self.run_heading.setText(run_title(self.live))
            self.status.show_record(record)
        problem = record_problem(record)
        if problem:
            level: Level = "warning" if record.status in ("failed", "cancelled") else "error"
            self.message_bar.show_message(level, problem)

    def _shown_run_id(self) -> str | None:
        """The run the user is looking at (or asked to see): the runs list keeps it selected."""
        if self._loading is not None:
            return self._loading
        return self.shown.run_id if self.shown is not None else None

    def _failed(self, message: str) -> None:
        self.statusBar().clearMessage()
        self.message_bar.show_message("error", message)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._docks_sized:  # sizes apply once the window has its own (first show)
            self._docks_sized = True
            width = self.width()
            sizes = [max(250, width * 5 // 28), max(400, width * 9 // 28)]
            self.resizeDocks(
                [self.library_dock, self.detail_dock], sizes, Qt.Orientation.Horizontal
            )

    def closeEvent(self, event: QCloseEvent) -> None:
        unsaved = unsaved_edits(self)
        if unsaved and not self.ask_discard(self, unsaved):
            event.ignore()  # back to the editors: nothing is lost
            return
        self.runner.stop()  # the engine records it as cancelled if the loop gets to run
        self.local_model.abandon()
        super().closeEvent(event)
