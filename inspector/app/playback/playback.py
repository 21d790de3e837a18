"""Playback of a recorded run for demos: its events go back into the window at the recorded
pace (or faster, or slower), without a model, a provider or the store being written.

``Playback`` drives a fresh ``LiveRun`` and the window's views through ``MainWindow.present``,
the path a live run's events take, so the timeline grows and the answer streams delta by delta
as it did. ``PlaybackControl`` (``install_playback``) wires it into the window: the "Play back"
action (Ctrl+P), the bar above the timeline, the keys, and stopping when a live run starts.
When each event is due and where steps land: ``playback_schedule``.
"""

from __future__ import annotations

import math
import time
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QBoxLayout, QStyle

from inspector.app.playback.playback_bar import PlaybackBar
from inspector.app.runtime.latest_read import LatestRead
from inspector.core.events import RunFinished, RunStarted
from inspector.core.live import LiveRun
from inspector.core.records import Usage
from inspector.reports.playback_schedule import (
    DEFAULT_SPEED,
    Schedule,
    position_text,
    speed_factor,
)
from inspector.workflows.runs import Recording, load_recording

if TYPE_CHECKING:
    from inspector.app.shell.main_window import MainWindow

TICK_BUDGET_S = 0.015  # at "max" speed, yield to the event loop this often


class Playback(QObject):
    """Plays one ``Recording`` into the window. ``position``: how many events are applied."""

    positionChanged = Signal(int)
    playingChanged = Signal(bool)
    activeChanged = Signal(bool)

    def __init__(self, window: MainWindow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._window = window
        self.recording: Recording | None = None
        self.schedule = Schedule.of([])
        self.run = LiveRun()
        self.position = 0
        self.playing = False
        self.speed_label = DEFAULT_SPEED
        self._start = 0  # the position playing (re)started at: due times count from there
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)

    @property
    def active(self) -> bool:
        return self.recording is not None

    # -- intents ----------------------------------------------------------------------------

    def load(self, recording: Recording) -> None:
        """Shows an empty run, ready to play ``recording`` from its start (paused)."""
        self.stop(restore=False)
        self.recording = recording
        self.schedule = Schedule.of(recording.events)
        self._rebuild(0)
        self.activeChanged.emit(True)

    def play(self) -> None:
        if not self._still_shown() or self.playing:
            return
        if self.position >= len(self.schedule):
            self._rebuild(0)  # from the end: play it again
        self._set_playing(True)
        self._restart_clock()
        self._tick()

    def pause(self) -> None:
        self._timer.stop()
        self._set_playing(False)

    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def step_forward(self) -> None:
        """To the next stop: one event, or the rest of one step's streamed deltas."""
        if not self._still_shown():
            return
        self.pause()
        target = self.schedule.next_stop(self.position)
        while self.position < target:
            self._apply_next()
        self._moved()

    def step_back(self) -> None:
        """To the previous stop, folded again from the run's start."""
        if not self._still_shown():
            return
        self.pause()
        self._rebuild(self.schedule.previous_stop(self.position))

    def seek(self, position: int) -> None:
        if not self._still_shown():
            return
        self._rebuild(max(0, min(position, len(self.schedule))))
        if self.playing:
            self._restart_clock()
            self._timer.start(0)

    def set_speed(self, label: str) -> None:
        speed_factor(label)  # an unknown label fails here, not at the next tick
        self.speed_label = label
        if self.playing:
            self._restart_clock()
            self._timer.start(0)

    def stop(self, *, restore: bool = True) -> None:
        """Ends the playback; ``restore``: show the recorded run as it ended (the normal view)."""
        recording = self.recording
        if recording is None:
            return
        shown = self._window.shown is self.run
        self.pause()
        self.recording = None
        if restore and shown:
            self._window.show_run(self._finished_run(recording))
        self.activeChanged.emit(False)

    # -- driving the views ------------------------------------------------------------------

    def _still_shown(self) -> bool:
        """Playing on while the window shows another run would fight it over the views."""
        if self.recording is None:
            return False
        if self._window.shown is not self.run:
            self.stop(restore=False)
            return False
        return True

    def _tick(self) -> None:
        if not self.playing or not self._still_shown():
            return
        speed = speed_factor(self.speed_label)
        now = self._clock.elapsed()
        deadline = time.perf_counter() + TICK_BUDGET_S
        length = len(self.schedule)
        while self.position < length and self._due(speed) <= now:
            self._apply_next()
            if time.perf_counter() > deadline:
                break
        self._moved()
        if self.position >= length:
            self._set_playing(False)
            return
        self._timer.start(max(0, math.ceil(self._due(speed) - now)))

    def _due(self, speed: float | None) -> float:
        return self.schedule.due_ms(self._start, self.position, speed)

    def _apply_next(self) -> None:
        assert self.recording is not None
        event = self.recording.events[self.position].event
        self.position += 1
        self.run.apply(event)
        status = self._window.status
        if isinstance(event, RunStarted):
            status.show_identity(event.provider, event.model)
            status.show_usage(Usage())
        self._window.present(self.run, event)
        if isinstance(event, RunFinished):
            status.show_record(event.record)

    def _rebuild(self, position: int) -> None:
        """A fresh run folded with the first ``position`` events, shown from scratch."""
        assert self.recording is not None
        run = LiveRun()
        for timed in self.recording.events[:position]:
            run.apply(timed.event)
        from inspector.app.shell.main_window import _usage  # the window module imports this one

        self.run, self.position = run, position
        self._window.show_run(run)
        if run.header is not None:
            self._window.status.show_identity(run.header.provider, run.header.model)
        if run.record is None:  # the tokens used this far, not those of where playback was
            self._window.status.show_usage(_usage(run))
        if not run.steps:  # nothing to select: the detail must not keep the last run's step
            self._window.detail.show_step(run, 0)
        self._moved()

    def _moved(self) -> None:
        self._window.run_heading.setText(self.heading())
        self.positionChanged.emit(self.position)

    def heading(self) -> str:
        from inspector.app.shell.main_window import run_title  # the window module imports this one

        recording = self.recording
        run_id = recording.run_id if recording else self.run.run_id
        if self.run.header is None and self.run.record is None:
            return f"Playback of run {run_id}"
        return f"Playback · {run_title(self.run)}"

    def _restart_clock(self) -> None:
        self._start = self.position
        self._clock.start()

    def _set_playing(self, playing: bool) -> None:
        if self.playing != playing:
            self.playing = playing
            self.playingChanged.emit(playing)

    @staticmethod
    def _finished_run(recording: Recording) -> LiveRun:
        if recording.record is not None:
            return LiveRun.from_record(recording.record)
        run = LiveRun()  # still recording elsewhere: as far as it had gone
        for timed in recording.events:
            run.apply(timed.event)
        return run

    def position_text(self) -> str:
        return position_text(self.schedule, self.position)


class PlaybackControl(QObject):
    """The window's side of playback: actions, keys, the bar, loading a run off the UI thread."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self._read: LatestRead[Recording] = LatestRead(window)  # a run's events, being read
        self.playback = Playback(window, self)
        self._build_actions()
        self.bar = PlaybackBar(
            [self.back_action, self.toggle_action, self.forward_action], self.stop_action
        )
        self.bar.hide()
        # Above the timeline, in whichever layout holds it.
        page = window.timeline.parentWidget()
        holder = page.layout() if page is not None else None
        assert isinstance(holder, QBoxLayout)
        holder.insertWidget(holder.indexOf(window.timeline), self.bar)

        self.bar.seekRequested.connect(self.playback.seek)
        self.bar.speedChosen.connect(self.playback.set_speed)
        self.playback.positionChanged.connect(self._position_changed)
        self.playback.playingChanged.connect(self._playing_changed)
        self.playback.activeChanged.connect(self._active_changed)
        window.runner.busyChanged.connect(self._busy_changed)
        window.library.runChosen.connect(self._other_run_chosen)
        # Whatever shows another run (compare, a replay's result…) resets the timeline.
        window.timeline.model.modelReset.connect(self._views_reset)
        self._active_changed(False)

    def _build_actions(self) -> None:
        window, style = self._window, self._window.style()
        pixmap = QStyle.StandardPixmap

        def action(text: str, key: str, slot: object, icon: QStyle.StandardPixmap) -> QAction:
            made = QAction(style.standardIcon(icon), text, window)
            made.setShortcut(QKeySequence(key))
            made.setToolTip(f"{text} ({QKeySequence(key).toString()})")
            made.triggered.connect(slot)
            window.addAction(made)  # window-wide, and enabled only while playing back
            return made

        self.play_back_action = action(
            "Play &back", "Ctrl+P", self.play_back_shown, pixmap.SP_MediaPlay
        )
        self.play_back_action.setToolTip(
            "Play the shown run back at its recorded pace, without a model (Ctrl+P)"
        )
        self.toggle_action = action("Play", "Space", self.playback.toggle, pixmap.SP_MediaPlay)
        self.back_action = action(
            "Step back", "Left", self.playback.step_back, pixmap.SP_MediaSeekBackward
        )
        self.forward_action = action(
            "Step forward", "Right", self.playback.step_forward, pixmap.SP_MediaSeekForward
        )
        self.stop_action = action("Stop playback", "Esc", self.stop_playback, pixmap.SP_MediaStop)
        menu = window.run_menu
        menu.addSeparator()
        menu.addAction(self.play_back_action)
        playback_menu = menu.addMenu("Playback")
        playback_menu.addActions(
            [self.toggle_action, self.back_action, self.forward_action, self.stop_action]
        )

    # -- intents ----------------------------------------------------------------------------

    def play_back_shown(self) -> None:
        """Plays back the run shown, or the one picked in the list and still being read."""
        shown = self._window.shown
        if self._window._loading is not None:
            self.play_back(self._window._loading)
        elif self.playback.active and shown is self.playback.run and self.playback.recording:
            self.play_back(self.playback.recording.run_id)  # again, from the start
        elif shown is None or not shown.run_id:
            self._window.message_bar.show_message("info", "Pick a recorded run to play back.")
        else:
            self.play_back(shown.run_id)

    def play_back(self, run_id: str) -> None:
        """Reads ``run_id``'s events off the UI thread, then plays them from the start."""
        if self._window.runner.busy:
            self._window.message_bar.show_message(
                "info", "A run is in progress: stop it (Esc) before playing a run back."
            )
            return
        self._read.start(
            f"Loading run {run_id} for playback…",
            partial(load_recording, self._window.store.path, run_id),
            self._loaded,
            f"Cannot play run {run_id} back",
        )

    def _loaded(self, recording: Recording) -> None:
        window, run_id = self._window, recording.run_id
        if not recording.events:
            window.message_bar.show_message("info", f"Run {run_id} has no events to play back.")
            return
        window.message_bar.clear()
        if recording.synthesized:
            window.message_bar.show_message(
                "info",
                f"Run {recording.run_id} was stored without its events: they are rebuilt from "
                "its record, each step's text arriving at once.",
            )
        self.playback.load(recording)
        self.playback.play()

    def stop_playback(self) -> None:
        self._read.drop()
        self.playback.stop()

    # -- the window's and the playback's signals ----------------------------------------------

    def _busy_changed(self, busy: bool) -> None:
        self.play_back_action.setEnabled(not busy)
        if busy:  # a live run takes the views (and Esc) over
            self._read.drop()
            self.playback.stop(restore=False)

    def _other_run_chosen(self, run_id: str) -> None:
        del run_id
        self._read.drop()
        self.playback.stop(restore=False)

    def _views_reset(self) -> None:
        if self.playback.active and self._window.shown is not self.playback.run:
            self.playback.stop(restore=False)

    def _active_changed(self, active: bool) -> None:
        for action in (self.toggle_action, self.back_action, self.forward_action):
            action.setEnabled(active)
        self.stop_action.setEnabled(active)
        self.bar.setVisible(active)
        if not active:
            self._playing_changed(False)

    def _playing_changed(self, playing: bool) -> None:
        pixmap = (
            QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        )
        self.toggle_action.setIcon(self._window.style().standardIcon(pixmap))
        self.toggle_action.setText("Pause" if playing else "Play")
        self.toggle_action.setToolTip(f"{'Pause' if playing else 'Play'} (Space)")

    def _position_changed(self, position: int) -> None:
        playback = self.playback
        self.bar.show_position(position, len(playback.schedule), playback.position_text())


def install_playback(window: MainWindow) -> PlaybackControl:
    return PlaybackControl(window)
