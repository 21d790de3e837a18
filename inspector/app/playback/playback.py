"""Playback of a recorded run for demos: its events go back into the window at the recorded
pace (or faster, or slower), without a model, a provider or the store being written.

``Playback`` drives a fresh ``LiveRun`` and the window's views through ``RunFocus.present``,
the path a live run's events take, so the timeline grows and the answer streams delta by delta
as it did. ``PlaybackController`` is the feature: the "Play back" action (Ctrl+P), the bar the
window places above the timeline, the keys, and stopping when a live run starts. It touches the
runner, the ``RunFocus``, the store's path and a notifier, never the window.
When each event is due and where steps land: ``playback_schedule``.
"""

from __future__ import annotations

import math
import time
from functools import partial
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStyle, QWidget

from inspector.app.playback.playback_bar import PlaybackBar
from inspector.app.runtime.latest_read import LatestRead
from inspector.app.runtime.notifier import Notifier
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.runtime.runner import TurnRunner
from inspector.core.live import LiveRun
from inspector.reports.playback_schedule import (
    DEFAULT_SPEED,
    Schedule,
    position_text,
    speed_factor,
)
from inspector.reports.run_text import run_title
from inspector.workflows.runs import Recording, load_recording

TICK_BUDGET_S = 0.015  # at "max" speed, yield to the event loop this often


class Playback(QObject):
    """Plays one ``Recording`` into the window. ``position``: how many events are applied."""

    positionChanged = Signal(int)
    playingChanged = Signal(bool)
    activeChanged = Signal(bool)

    def __init__(self, focus: RunFocus, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._focus = focus
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
        shown = self._focus.shown is self.run
        self.pause()
        self.recording = None
        if restore and shown:
            self._focus.show(self._finished_run(recording))
        self.activeChanged.emit(False)

    # -- driving the views ------------------------------------------------------------------

    def _still_shown(self) -> bool:
        """Playing on while the window shows another run would fight it over the views."""
        if self.recording is None:
            return False
        if self._focus.shown is not self.run:
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
        self._focus.present(self.run, event)  # the status bar follows it as a live run's

    def _rebuild(self, position: int) -> None:
        """A fresh run folded with the first ``position`` events, shown from scratch."""
        assert self.recording is not None
        run = LiveRun()
        for timed in self.recording.events[:position]:
            run.apply(timed.event)
        self.run, self.position = run, position
        # The window shows its identity, the tokens used this far and, with no step yet, an
        # empty detail (not the last run's step).
        self._focus.show(run)
        self._moved()

    def _moved(self) -> None:
        self._focus.set_heading(self.heading())
        self.positionChanged.emit(self.position)

    def heading(self) -> str:
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


class PlaybackController(QObject):
    """The playback feature: actions, keys, the bar, loading a run off the UI thread."""

    def __init__(
        self,
        runner: TurnRunner,
        focus: RunFocus,
        store_path: Path,
        notify: Notifier,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._runner, self._focus, self._path, self._notify = runner, focus, store_path, notify
        self._style = parent.style()
        self._read: LatestRead[Recording] = LatestRead(notify)  # a run's events, being read
        self.playback = Playback(focus, self)
        self._build_actions(parent)
        self.bar = PlaybackBar(
            [self.back_action, self.toggle_action, self.forward_action], self.stop_action
        )
        self.bar.hide()

        self.bar.seekRequested.connect(self.playback.seek)
        self.bar.speedChosen.connect(self.playback.set_speed)
        self.playback.positionChanged.connect(self._position_changed)
        self.playback.playingChanged.connect(self._playing_changed)
        self.playback.activeChanged.connect(self._active_changed)
        runner.busyChanged.connect(self._busy_changed)
        # Whatever shows another run (compare, a replay's result…) ends the playback.
        focus.shownChanged.connect(self._shown_changed)
        self._active_changed(False)

    def _build_actions(self, parent: QWidget) -> None:
        style = self._style
        pixmap = QStyle.StandardPixmap

        def action(text: str, key: str, slot: object, icon: QStyle.StandardPixmap) -> QAction:
            made = QAction(style.standardIcon(icon), text, parent)
            made.setShortcut(QKeySequence(key))
            made.setToolTip(f"{text} ({QKeySequence(key).toString()})")
            made.triggered.connect(slot)
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

    def actions(self) -> dict[str, QAction]:
        """Window-wide; all but "Play back" are enabled only while playing back."""
        return {
            "play_back": self.play_back_action,
            "playback_toggle": self.toggle_action,
            "playback_back": self.back_action,
            "playback_forward": self.forward_action,
            "playback_stop": self.stop_action,
        }

    # -- intents ----------------------------------------------------------------------------

    def play_back_shown(self) -> None:
        """Plays back the run shown, or the one picked in the list and still being read."""
        shown, loading = self._focus.shown, self._focus.loading
        if loading is not None:
            self.play_back(loading)
        elif self.playback.active and shown is self.playback.run and self.playback.recording:
            self.play_back(self.playback.recording.run_id)  # again, from the start
        elif shown is None or not shown.run_id:
            self._notify.show_message("info", "Pick a recorded run to play back.")
        else:
            self.play_back(shown.run_id)

    def play_back(self, run_id: str) -> None:
        """Reads ``run_id``'s events off the UI thread, then plays them from the start."""
        if self._runner.busy:
            self._notify.show_message(
                "info", "A run is in progress: stop it (Esc) before playing a run back."
            )
            return
        self._read.start(
            f"Loading run {run_id} for playback…",
            partial(load_recording, self._path, run_id),
            self._loaded,
            f"Cannot play run {run_id} back",
        )

    def _loaded(self, recording: Recording) -> None:
        notify, run_id = self._notify, recording.run_id
        if not recording.events:
            notify.show_message("info", f"Run {run_id} has no events to play back.")
            return
        notify.clear()
        if recording.synthesized:
            notify.show_message(
                "info",
                f"Run {recording.run_id} was stored without its events: they are rebuilt from "
                "its record, each step's text arriving at once.",
            )
        self.playback.load(recording)
        self.playback.play()

    def stop_playback(self) -> None:
        self._read.drop()
        self.playback.stop()

    def other_run_chosen(self, run_id: str) -> None:
        """The user picked a run in the list: a playback (or one being read) gives way."""
        del run_id
        self._read.drop()
        self.playback.stop(restore=False)

    # -- the runner's and the playback's signals ----------------------------------------------

    def _busy_changed(self, busy: bool) -> None:
        self.play_back_action.setEnabled(not busy)
        if busy:  # a live run takes the views (and Esc) over
            self._read.drop()
            self.playback.stop(restore=False)

    def _shown_changed(self, shown: object) -> None:
        if self.playback.active and shown is not self.playback.run:
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
        self.toggle_action.setIcon(self._style.standardIcon(pixmap))
        self.toggle_action.setText("Pause" if playing else "Play")
        self.toggle_action.setToolTip(f"{'Pause' if playing else 'Play'} (Space)")

    def _position_changed(self, position: int) -> None:
        playback = self.playback
        self.bar.show_position(position, len(playback.schedule), playback.position_text())
