"""The inspector window, and the app's one composition root: scenarios and recorded runs on the
left, the step timeline and the attempts side by side in the centre, the step in detail / the
policy of the next run / the validators / the scenario on the right.

It builds the views and the features, places them, and connects them in ``_connect``;
features never see the window: they get the runner, the ``RunFocus``, the panel they need and
a notifier, and talk back through signals. Every engine event goes to the ``LiveRun`` first,
then, through the ``RunFocus``, to the views showing that run (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from inspector.app.compare.compare_controller import CompareController
from inspector.app.detail.attempts_view import AttemptsView
from inspector.app.detail.step_detail import StepDetail
from inspector.app.formats.formats_controller import FormatsController
from inspector.app.library.library_panel import LibraryPanel
from inspector.app.local_model.local_model_control import LocalModelControl
from inspector.app.local_model.local_model_status import LocalModelStatus
from inspector.app.playback.playback import PlaybackController
from inspector.app.policy.policy_panel import PolicyPanel
from inspector.app.proxy.proxy_controller import ProxyController
from inspector.app.proxy.store_watch import StoreWatch
from inspector.app.replay.replay_controller import ReplayController
from inspector.app.runtime.event_pacer import EventPacer
from inspector.app.runtime.gui_collector import settle_loaded
from inspector.app.runtime.notifier import Notices
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.runtime.runner import TurnRunner
from inspector.app.scenario.scenario_editor import ScenarioEditor
from inspector.app.shell.about import show_about
from inspector.app.shell.actions import WINDOW_ACTIONS, build_menus, fill_toolbar, make_action
from inspector.app.shell.centre_tabs import CentreTabs
from inspector.app.shell.dock_actions import dock_actions
from inspector.app.shell.docks import add_docks
from inspector.app.shell.provider_settings import open_provider_settings
from inspector.app.shell.recent_scenarios import RecentScenarios
from inspector.app.shell.run_status import RunStatus
from inspector.app.shell.runs_listing import RunsListing
from inspector.app.shell.stored_open import fetch_step_soon, open_stored
from inspector.app.shell.unsaved_edits import ask_discard, unsaved_edits
from inspector.app.shell.welcome import FIRST_DEMO, WelcomePanel
from inspector.app.shell.window_layout import WindowLayout
from inspector.app.sweep.sweep_controller import SweepController
from inspector.app.sweep.sweep_view import SweepView
from inspector.app.timeline.timeline_view import TimelineView
from inspector.app.validators.validators_panel import ValidatorsPanel
from inspector.app.widgets.icons import app_icon
from inspector.app.widgets.message_bar import Level, MessageBar
from inspector.core.errors import InspectorError
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Usage
from inspector.reports.run_text import RunningUsage, record_problem, run_title, usage_so_far
from inspector.resources import DEMO_PREFIX, demo_names, resolve_scenario
from inspector.store import Store
from inspector.workflows.runs import load_stored_run

__all__ = ["TITLE", "MainWindow", "load_stored_run", "record_problem", "run_title"]

TITLE = "Agent Inspector"
# While a run streams, its steps so far are frozen out of the collector's scans every so many
# steps: full collections otherwise walk all of them, ever longer (400 ms at 100,000 steps).
SETTLE_EVERY = 1_000


class MainWindow(QMainWindow):
    def __init__(
        self, store: Store, runner: TurnRunner | None = None, *, first_run: bool = False
    ) -> None:
        """``first_run``: nothing was ever recorded; open on the demos with the welcome page."""
        super().__init__()
        self.store = store
        self.runner = runner or TurnRunner(store, parent=self)
        self.focus, self.pacer = RunFocus(self), EventPacer(self)  # the engine's, in slices
        self.selected_step: int | None = None
        self._tokens = RunningUsage()  # of the run streaming in (or played back)
        self.local_model_url: str | None = None  # the running local model's, once known
        self._load_task: asyncio.Task[None] | None = None
        self.ask_discard = ask_discard  # asked on quitting with unsaved edits (tests answer it)
        self.setWindowTitle(TITLE)
        self.setWindowIcon(app_icon())
        self._build()
        self._lay_out()
        self._build_actions()
        self._connect()
        self._busy(False)
        self.list_runs_soon()
        self.store_watch.start()
        if first_run:
            self.library.select_scenario(f"{DEMO_PREFIX}{FIRST_DEMO}")
            self.show_welcome()

    # ---- build, place, connect -------------------------------------------------------------

    def _build(self) -> None:
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
        self.run_heading.setWordWrap(True)  # a long heading wraps instead of widening the centre
        self.welcome = WelcomePanel()
        self.welcome.hide()
        self.local_model = LocalModelControl(self)
        notices = self.notices = Notices(self.message_bar, self.statusBar())
        runner, focus, path = self.runner, self.focus, self.store.path
        self.replay = ReplayController(runner, focus, self.policy, notices, self)
        self.playback = PlaybackController(runner, focus, path, notices, self)
        self.compare = CompareController(
            runner, focus, path, notices, self.library.selected_runs_oldest_first, self
        )
        self.validators = ValidatorsPanel(path, notices)  # re-validation on every save
        self.scenario_editor = ScenarioEditor()
        self.scenario_editor.model_edits = self.policy.model_edits
        self.proxy = ProxyController(path, notices, self)
        self.formats = FormatsController(path, notices, focus.shown_run_id, self)
        self.store_watch = StoreWatch(self.store.data_version, self)  # runs from elsewhere
        self.sweep = SweepController(self.store, notices, self)
        self.sweep_view = SweepView(self.sweep)
        self.runs_listing = RunsListing(self.store, self.library, notices)

    def _lay_out(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.message_bar)
        self.timeline_page = QWidget()
        page = QVBoxLayout(self.timeline_page)
        page.setContentsMargins(0, 0, 0, 0)
        page.addWidget(self.welcome, 1)
        page.addWidget(self.run_heading)
        page.addWidget(self.playback.bar)  # above the timeline while playing back
        page.addWidget(self.timeline, 1)
        tabs = (self.timeline_page, self.attempts, self.compare.view, self.sweep_view)
        self.centre_tabs = CentreTabs(self, *tabs)
        layout.addWidget(self.centre_tabs, 1)
        self.setCentralWidget(central)

        docks = self.docks = add_docks(
            self,
            {
                "libraryDock": self.library,
                "stepDock": self.detail,
                "policyDock": self.policy,
                "validatorsDock": self.validators,
                "scenarioDock": self.scenario_editor,
            },
        )
        self.library_dock, self.detail_dock = docks["libraryDock"], docks["stepDock"]
        self.policy_dock = docks["policyDock"]
        self.validators_dock, self.scenario_dock = docks["validatorsDock"], docks["scenarioDock"]

        self.status = RunStatus(self.statusBar(), self)

    def _handlers(self) -> dict[str, Callable[[], object]]:
        """What each of the window's own actions (``shell/actions.py``) does."""
        return {
            "open": self.open_scenario,
            "edit_copy": lambda: self.library.edit_demo_copy(self.notices),
            "run": self.run_turn,
            "stop": self.stop_turn,
            "show_cleared": self._toggle_cleared,
            "filter": self.library.filter_box.setFocus,
            "focus_timeline": self._focus_timeline,
            "quit": self.close,
            "settings": self.open_provider_settings,
            "local_start": self.local_model.start,
            "local_stop": self.local_model.stop,
            "local_status": self.local_model.refresh,
            "reset_layout": lambda: self.window_layout.reset(),
            "welcome": self.show_welcome,
            "about": self.show_about,
        }

    def _build_actions(self) -> None:
        handlers = self._handlers()
        actions: dict[str, QAction] = {}
        for spec in WINDOW_ACTIONS:
            action = actions[spec.id] = make_action(spec, self)
            action.triggered.connect(handlers[spec.id])
        features = (self.replay, self.playback, self.compare, self.proxy, self.formats)
        for feature in features:
            actions.update(feature.actions())
        for action in actions.values():
            self.addAction(action)  # shortcuts work wherever the focus is in the window
        actions.update(dock_actions(self.findChildren(QDockWidget), self))
        self.recent = RecentScenarios(self.library, self.notices, self)  # File › Open recent
        actions["open_recent"] = self.recent.menu.menuAction()
        actions.update(self.centre_tabs.tab_actions(self))
        self.actions_by_id = actions
        self.show_cleared_action = actions["show_cleared"]
        self.show_cleared_action.setChecked(True)
        self.run_action, self.stop_action = actions["run"], actions["stop"]
        self.settings_action, self.about_action = actions["settings"], actions["about"]
        self.welcome_action = actions["welcome"]
        local = [actions[name] for name in ("local_start", "local_stop", "local_status")]
        self.local_start_action, self.local_stop_action, self.local_status_action = local
        self.local_model_status = LocalModelStatus(self.local_model, self.notices, local, self)
        self.local_model_label = self.local_model_status.label
        self.statusBar().addPermanentWidget(self.local_model_label)

        self.toolbar = QToolBar("Run", self)
        self.toolbar.setObjectName("runToolbar")
        self.toolbar.setMovable(False)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        fill_toolbar(self.toolbar, actions, {"replayOffline": self.replay.offline_box})
        self.addToolBar(self.toolbar)
        menus = build_menus(self.menuBar(), actions)
        self.run_menu, self.view_menu = menus["Run"], menus["View"]
        self.local_model_menu = menus["Local model"]
        self.library.add_run_action(self.compare.action)
        self.library.add_run_action(self.formats.save_action)
        splits = {"library": self.library, "compare": self.compare.view.split}
        splits["validators"] = self.validators.splitter
        checks = {"show_cleared": self.show_cleared_action}
        self.window_layout = WindowLayout(self, self.docks, splits, checks)  # saved, restored

    def _connect(self) -> None:
        library, runner, focus = self.library, self.runner, self.focus
        library.scenarioChosen.connect(self.choose_scenario)
        library.runChosen.connect(self._run_chosen)
        library.run_list.selectionModel().selectionChanged.connect(self._runs_selected)
        self.timeline.stepSelected.connect(self._step_selected)
        self.timeline.show_cleared_box.toggled.connect(self.show_cleared_action.setChecked)
        runner.preparing.connect(self._preparing)
        runner.engineEvent.connect(lambda event: self.pacer.later(self._on_event, event))
        self.timeline.follow_turn = self.pacer.alone  # a follow's repaint: a turn of its own
        runner.finished.connect(lambda record: self.pacer.later(self._finished, record))
        runner.failed.connect(lambda line: self.pacer.later(self._failed, line))
        runner.busyChanged.connect(self._busy)
        focus.showRequested.connect(self._show)
        focus.presented.connect(self._present)
        focus.headingRequested.connect(self.run_heading.setText)
        self.welcome.demoRequested.connect(self.run_demo)
        self.welcome.settingsRequested.connect(self.open_provider_settings)
        self.welcome.dismissed.connect(self.hide_welcome)
        self.local_model_status.urlChanged.connect(self._set_local_model_url)
        self.replay.compareRequested.connect(self.compare_runs)
        self.replay.policyRaised.connect(self.policy_dock.raise_)
        self.playback.playback.activeChanged.connect(self._playback_active)
        self.compare.shown.connect(self.centre_tabs.show_compare)
        self.compare.timelineRequested.connect(self.centre_tabs.show_run_views)
        self.validators.flipsChanged.connect(self.timeline.set_flips)
        self.validators.stepRequested.connect(self.timeline.select_step)
        self.attempts.stepRequested.connect(self.timeline.select_step)
        self.timeline.stepSelected.connect(self.attempts.set_current_step)
        self.detail.wholeStepWanted.connect(lambda run, i: fetch_step_soon(self, run, i))
        self.validators.runRequested.connect(library.select_run)
        self.validators.copySaved.connect(self._validators_copy_saved)
        self.scenario_editor.saved.connect(self._scenario_saved)
        self.store_watch.changed.connect(self._store_changed)
        self.proxy.urlChanged.connect(self.store_watch.check)  # its first run soon after
        self.formats.runImported.connect(self._run_imported)
        self.formats.openRequested.connect(library.select_scenario)
        library.scenarioChosen.connect(self.sweep_view.set_scenario)
        self.sweep.runsChanged.connect(self._sweep_recorded)
        self.sweep.armRunsShown.connect(library.show_only)
        self.sweep.compareRequested.connect(self.compare_runs)

    # ---- intents ---------------------------------------------------------------------------

    def open_scenario(self) -> None:
        self.recent.ask_open()  # File › Open scenario… (shell/recent_scenarios.py)

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
        self.centre_tabs.show_timeline()
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
        return open_provider_settings(self)

    def play_back(self, run_id: str) -> None:
        """Plays recorded run ``run_id`` back into the views, without a model (app/playback/)."""
        self.playback.play_back(run_id)

    def compare_runs(self, run_ids: list[str]) -> None:
        """Compares 2–4 recorded runs (the first is the baseline) in the Compare tab."""
        self.compare.compare(run_ids)

    def show_stored_run(self, run_id: str) -> None:
        """Shows a recorded run, read and folded off the UI thread (a 30,000-step run takes
        seconds); a load the user has since moved away from is dropped when it arrives."""
        live = self.focus.live
        if live is not None and live.run_id == run_id:
            self.focus.set_loading(None)
            self._show(live)
            return
        self.focus.set_loading(run_id)
        self.hide_welcome()
        self.run_heading.setText(f"Loading run {run_id}…")
        self.statusBar().showMessage(f"Loading run {run_id}…")
        opening = open_stored(self, run_id, load_stored_run)  # a light read first if long
        self._load_task = asyncio.get_event_loop().create_task(opening)

    def list_runs_soon(self) -> None:
        self.runs_listing.list_soon(keep=self.focus.shown_run_id)

    def refresh_runs(self, keep: str | None = None) -> None:
        self.runs_listing.refresh(keep)

    def note_runs(self, keep: str | None = None) -> None:
        self.runs_listing.note(keep)

    def _store_changed(self) -> None:
        """Another connection (the proxy's writer, a terminal's ``run`` or ``proxy``) wrote to
        the store: its runs join the list, and a shown run still recording there is read
        again, so a proxied turn fills the timeline as it happens."""
        shown = self.focus.shown
        self.note_runs(keep=shown.run_id if shown is not None else None)
        if (
            shown is not None
            and shown.record is None
            and shown is not self.focus.live
            and not self.playback.playback.active
            and self.focus.loading is None
        ):
            self.show_stored_run(shown.run_id)

    def _run_imported(self, run_id: str) -> None:
        self.note_runs(keep=run_id)
        self.show_stored_run(run_id)

    # ---- showing runs ----------------------------------------------------------------------

    @property
    def shown(self) -> LiveRun | None:
        """The run the views show (``RunFocus.shown``)."""
        return self.focus.shown

    @shown.setter
    def shown(self, run: LiveRun | None) -> None:
        self.focus.shown = run

    @property
    def live(self) -> LiveRun | None:
        """The run in flight, or the last one started here (``RunFocus.live``)."""
        return self.focus.live

    @live.setter
    def live(self, run: LiveRun | None) -> None:
        self.focus.live = run

    def show_run(self, run: LiveRun) -> None:
        """Shows ``run`` instead of a stored run still loading (``RunFocus.show``)."""
        self.focus.show(run)

    def show_loaded(self, run: LiveRun) -> None:
        """Shows a stored run just read (``stored_open``)."""
        self._show(run)

    def _show(self, run: LiveRun) -> None:
        self.hide_welcome()
        self.focus.shown = run
        self.selected_step = None
        self.timeline.show_run(run)
        self.attempts.show_run(run)  # a light run: "loading", until filled (stored_open)
        self.run_heading.setText(run_title(run))
        if run.record is not None:
            self.status.show_record(run.record)
        elif run.header is not None:  # still running, or played back: the tokens this far
            self.status.show_identity(run.header.provider, run.header.model)
            self.status.show_usage(usage_so_far(run))
        if run.steps:  # its detail on a later turn: a big run's open is two short stalls
            self._select_last_soon()
        else:  # nothing to select: the detail must not keep the last run's step
            self.detail.show_step(run, 0)
        self.validators.show_run(run)  # its flips from the last re-validation, if any
        self.focus.shown_now(run)

    def _present(self, run: LiveRun, event: Event) -> None:
        """``event``, folded into the shown ``run`` (live, or played back), to the views."""
        self.timeline.on_event(event)
        self.detail.on_event(event)
        self.attempts.on_event(event)
        if event.kind == "run_started":
            self.status.show_identity(event.provider, event.model)
            self.status.show_usage(Usage())
        elif event.kind == "step_started":  # followed unless the user looks elsewhere
            self.timeline.follow_newest()  # at most every FOLLOW_MS (timeline_view.py)
        elif event.kind == "step_finished":
            self.status.show_usage(self._tokens.after(run, event.step), soon=True)
        elif event.kind == "run_finished":
            self.status.show_record(event.record)

    def _select_last_soon(self) -> None:
        self.timeline.following = True  # the detail renders the newest step once per interval
        try:
            self.timeline.select_last()
        finally:
            self.timeline.following = False

    def _step_selected(self, index: int) -> None:
        self.selected_step = index
        if self.shown is not None:
            # the newest step of a run streaming in: the detail renders it once per interval
            self.detail.show_step(self.shown, index, soon=self.timeline.following)

    def _toggle_cleared(self) -> None:
        self.timeline.set_show_cleared(self.show_cleared_action.isChecked())

    # ---- what the library, the features and the timeline ask -----------------------------------

    def _run_chosen(self, run_id: str) -> None:
        self.show_stored_run(run_id)
        self.playback.other_run_chosen(run_id)

    def _sweep_recorded(self) -> None:
        """A sweep's runs join the runs list; the tab in front stays (a selection kept across
        the merge would otherwise bring the Timeline forward)."""
        tab = self.centre_tabs.currentWidget()
        self.note_runs()
        self.centre_tabs.setCurrentWidget(tab)

    def _runs_selected(self) -> None:
        if len(self.library.selected_runs()) == 1:  # not while building a selection
            self.compare.show_timeline()

    def _focus_timeline(self) -> None:
        self.compare.show_timeline()
        self.centre_tabs.show_timeline(focus=self.timeline.table)

    def _playback_active(self, active: bool) -> None:
        if active:  # a run played back is shown in the timeline
            self.compare.show_timeline()

    def _validators_copy_saved(self, path: str) -> None:
        if not self.library.select_scenario(path):
            self.validators.set_scenario(path)

    def _scenario_saved(self, path: str) -> None:
        self.message_bar.show_message("info", f"Saved {path}")
        if self.policy.scenario is not None:  # the model settings are the file's now
            with contextlib.suppress(InspectorError):
                self.policy.model_form.set_base(resolve_scenario(path).model)
        if self.library.current_scenario() != self.scenario_editor.ref:
            self.library.select_scenario(path)  # a demo's copy: the library shows it next

    def _set_local_model_url(self, url: str | None) -> None:
        self.local_model_url = url
        self.policy.set_local_model_url(url)

    # ---- the runner's signals --------------------------------------------------------------

    def _busy(self, busy: bool) -> None:
        self.run_action.setEnabled(not busy)
        self.stop_action.setEnabled(busy)
        self.status.running(busy)

    def _preparing(self, ref: str) -> None:
        self.message_bar.clear()
        self.hide_welcome()
        self.statusBar().showMessage(f"Starting {ref}…")
        self.compare.show_timeline()

    def _on_event(self, event: Event) -> None:
        if event.kind == "run_started":
            self.focus.set_loading(None)  # the new run takes the views over a stored one
            live = LiveRun()
            live.apply(event)
            self.focus.live = live
            self._show(live)
            self.note_runs(keep=event.run_id)  # the store has its row now
            self.statusBar().showMessage(f"Running {event.scenario}…")
            self.pacer.end_slice()  # the new run is painted before its first events
            return
        running = self.focus.live
        if running is None or event.run_id != running.run_id:
            return
        running.apply(event)
        self.focus.present(running, event)  # to the views, if they show it
        if event.kind == "step_finished" and event.step.index % SETTLE_EVERY == 0:
            settle_loaded()  # a long run's steps so far out of the collector's scans

    def _finished(self, record: RunRecord) -> None:
        settle_loaded()  # the finished run's objects out of the collector's scans
        self.statusBar().showMessage(f"Run {record.run_id} {record.status}", 5000)
        self.note_runs(keep=self.focus.shown_run_id() or record.run_id)
        live = self.focus.live
        if live is not None and live.run_id == record.run_id and self.shown is live:
            self.run_heading.setText(run_title(live))
            self.status.show_record(record)
        problem = record_problem(record)
        if problem:
            level: Level = "warning" if record.status in ("failed", "cancelled") else "error"
            self.message_bar.show_message(level, problem)
        self.replay.finished(record)  # after the window's message: a replay's is left showing

    def _failed(self, message: str) -> None:
        self.statusBar().clearMessage()
        self.message_bar.show_message("error", message)

    def closeEvent(self, event: QCloseEvent) -> None:
        editors = (self.validators.python_editor, self.validators.table, self.scenario_editor)
        unsaved = unsaved_edits(editors)
        if unsaved and not self.ask_discard(self, unsaved):
            event.ignore()  # back to the editors: nothing is lost
            return
        self.runner.stop()  # the engine records it as cancelled if the loop gets to run
        self.store_watch.stop()
        self.proxy.stop()  # its open runs are ended if the loop gets to run
        self.sweep.cancel()  # so do a sweep's runs in flight
        self.local_model.abandon()
        self.window_layout.save()  # to window.ini, when the app gave it one
        super().closeEvent(event)
