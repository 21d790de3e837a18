"""The status bar's run fields: provider, model, elapsed time (live while a turn runs), tokens,
and a busy indicator."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from inspector.app.widgets.status_line import StatusLine
from inspector.core.records import RunRecord, Usage

TICK_MS = 100


def elapsed_text(ms: float) -> str:
    return (
        f"{ms / 1000:.1f} s"
        if ms < 60_000
        else f"{int(ms // 60_000)} min {ms % 60_000 / 1000:.0f} s"
    )


def tokens_text(usage: Usage) -> str:
    return f"{usage.input_tokens:,} in · {usage.output_tokens:,} out tokens"


class RunStatus:
    """Owns the permanent widgets it adds to ``bar``."""

    def __init__(self, bar: QStatusBar, parent: QWidget) -> None:
        self.progress = QProgressBar(parent)
        self.progress.setObjectName("runProgress")
        self.progress.setRange(0, 0)  # busy: a turn has no known length
        self.progress.setFixedWidth(120)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.provider = QLabel(parent)
        self.model = QLabel(parent)
        # Changing every tick: widened only when a text is wider than any before, never
        # relaying the window out for a new figure (widgets/status_line.py).
        self.elapsed = StatusLine("", parent, grow=True)
        self.elapsed.setObjectName("elapsed")
        self.tokens = StatusLine("", parent, grow=True)
        self.tokens.setObjectName("tokens")
        for widget in (self.progress, self.provider, self.model, self.elapsed, self.tokens):
            bar.addPermanentWidget(widget)
        self._clock = QElapsedTimer()
        self._timer = QTimer(parent)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._usage = Usage()  # shown at the next write (``soon``)
        self._usage_timer = QTimer(parent)
        self._usage_timer.setSingleShot(True)
        self._usage_timer.setInterval(TICK_MS)
        self._usage_timer.timeout.connect(self._write_usage)
        self.show_usage(Usage())

    def show_identity(self, provider: str, model: str) -> None:
        self.provider.setText(f"Provider: {provider}")
        self.model.setText(f"Model: {model}")

    def show_usage(self, usage: Usage, soon: bool = False) -> None:
        """``soon``: within ``TICK_MS``, the last usage winning (a streaming run's steps: a
        changed label relays the status bar out and repaints the window)."""
        self._usage = usage
        if not soon:
            self._write_usage()
        elif not self._usage_timer.isActive():
            self._usage_timer.start()

    def _write_usage(self) -> None:
        self._usage_timer.stop()
        self.tokens.setText(tokens_text(self._usage))

    def running(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        if busy:
            self._clock.start()
            self._timer.start()
            self._tick()
        else:
            self._timer.stop()

    def _tick(self) -> None:
        self.elapsed.setText(elapsed_text(float(self._clock.elapsed())))

    def show_record(self, record: RunRecord) -> None:
        self.show_identity(record.provider or "?", record.model or "?")
        self.elapsed.setText(elapsed_text(record.duration_ms))
        self.show_usage(record.usage)
