"""``RunFocus``: which run the window's views show, the run in flight, and the stored run being read
for them. Features read it and ask through it; only the window (the composition root) turns
its requests into view updates, so no feature needs the window or another feature's widgets.

The flow is one way: a feature calls ``show``/``present``/``set_heading``; the window, connected
to the matching ``*Requested`` signal, updates its views in one place and calls ``shown_now``,
which emits ``shownChanged`` for whoever must react to another run being shown.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from inspector.app.runtime.run_graveyard import RunGraveyard
from inspector.core.events import Event
from inspector.core.live import LiveRun


class RunFocus(QObject):
    showRequested = Signal(object)  # LiveRun: show it instead of whatever is shown
    presented = Signal(object, object)  # (LiveRun, Event): an event folded into the shown run
    headingRequested = Signal(str)  # the line above the timeline, for a run shown specially
    shownChanged = Signal(object)  # LiveRun: the views show it now
    loadingChanged = Signal(object)  # run_id | None: the stored run being read for the views

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.live: LiveRun | None = None  # the run in flight (or the last one started here)
        self._shown: LiveRun | None = None
        self._loading: str | None = None
        self.graveyard = RunGraveyard(self)  # frees the runs no longer shown, a slice a turn

    @property
    def shown(self) -> LiveRun | None:
        """The run the views show."""
        return self._shown

    @shown.setter
    def shown(self, run: LiveRun | None) -> None:
        if run is not self._shown:
            self.graveyard.bury(self._shown)  # not freed now, inside the next run's show
            self._shown = run

    @property
    def loading(self) -> str | None:
        """The stored run picked and still being read for the views (None: none)."""
        return self._loading

    def set_loading(self, run_id: str | None) -> None:
        if run_id != self._loading:
            self._loading = run_id
            self.loadingChanged.emit(run_id)

    def shown_run_id(self) -> str | None:
        """The run the user is looking at, or asked to see."""
        if self._loading is not None:
            return self._loading
        return self.shown.run_id if self.shown is not None else None

    # ---- requests (features) -------------------------------------------------------------------

    def show(self, run: LiveRun) -> None:
        """Shows ``run`` (playback's, or any run folded elsewhere) instead of a stored run still
        loading."""
        self.set_loading(None)
        self.showRequested.emit(run)

    def present(self, run: LiveRun, event: Event) -> None:
        """``event``, already folded into ``run``, goes to the views if they show ``run``."""
        if self.shown is run:
            self.presented.emit(run, event)

    def set_heading(self, text: str) -> None:
        self.headingRequested.emit(text)

    # ---- the window ----------------------------------------------------------------------------

    def shown_now(self, run: LiveRun) -> None:
        """The window calls this once its views show ``run``."""
        self.shown = run
        self.shownChanged.emit(run)
