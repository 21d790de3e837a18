"""The bar above the timeline while a recorded run plays back: step back, play/pause, step
forward, a position slider with "event 12 / 80 · 1.4 s / 3.2 s", the speed, and stop.

It renders what ``PlaybackController`` tells it and emits the user's intents; the buttons are the
control's window-level actions, so keys, menu and buttons share one enabled state."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSlider,
    QToolButton,
    QWidget,
)

from inspector.reports.playback_schedule import DEFAULT_SPEED, SPEEDS


class PlaybackBar(QFrame):
    seekRequested = Signal(int)  # a position the user dragged or clicked the slider to
    speedChosen = Signal(str)  # a ``SPEEDS`` label

    def __init__(self, actions: list[QAction], stop: QAction, parent: QWidget | None = None):
        """``actions``: step back, play/pause, step forward, in that order; ``stop`` last."""
        super().__init__(parent)
        self.setObjectName("playbackBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        title = QLabel("<b>Playback</b>", self)
        layout.addWidget(title)
        for action in actions:
            layout.addWidget(self._button(action))
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setObjectName("playbackPosition")
        # Left/Right belong to the step actions, not to a focused slider.
        self.slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.slider.setRange(0, 0)
        self.slider.valueChanged.connect(self._slider_moved)
        layout.addWidget(self.slider, 1)
        self.position_label = QLabel(self)
        self.position_label.setObjectName("playbackPositionText")
        layout.addWidget(self.position_label)
        self.speed = QComboBox(self)
        self.speed.setObjectName("playbackSpeed")
        self.speed.setToolTip("Playback speed (idle gaps over 2 s are shortened to 2 s)")
        self.speed.addItems([label for label, _ in SPEEDS])
        self.speed.setCurrentText(DEFAULT_SPEED)
        self.speed.currentTextChanged.connect(self.speedChosen)
        layout.addWidget(self.speed)
        layout.addWidget(self._button(stop))

    def _button(self, action: QAction) -> QToolButton:
        button = QToolButton(self)
        button.setDefaultAction(action)
        button.setAutoRaise(True)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Space plays/pauses, not "click"
        return button

    def show_position(self, position: int, length: int, text: str) -> None:
        self.slider.blockSignals(True)  # not a user's seek
        self.slider.setRange(0, length)
        self.slider.setValue(position)
        self.slider.blockSignals(False)
        self.position_label.setText(text)

    def _slider_moved(self, value: int) -> None:
        self.seekRequested.emit(value)
