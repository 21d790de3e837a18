"""What the model saw at one step in each run, side by side: one read-only text pane per run,
lines aligned across the panes and scrolled together, lines that differ from the first run
tinted (added green, removed red, changed yellow) in colours for a light or dark palette.

Lines are wrapped to the width of the narrowest pane (a line never hides past the pane's edge,
with the docks open or not); when the panes get wider or narrower, ``rewrap`` asks for the diff
again at the new width."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import (
    QFontMetricsF,
    QResizeEvent,
)
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QStyle, QVBoxLayout, QWidget

from inspector.app.widgets.diff_tints import fill_tinted
from inspector.app.widgets.json_view import monospace_font
from inspector.reports.compare_lines import DiffKind, LineDiff

MIN_WRAP = 16  # characters: narrower panes scroll sideways instead
REWRAP_DELAY_MS = 150  # a resize settles before the diff is built again


def diff_summary(diff: LineDiff) -> str:
    """How the runs differ ("each run against run 1: 5 lines differ"), and which runs never
    got to the step."""
    if diff.absent[0]:
        summary = "run 1 never got this far: nothing to diff against"
    else:
        changed = diff.changed
        summary = "each run against run 1: " + (
            f"{changed} line{'s' * (changed != 1)} differ" if changed else "the same"
        )
    others = [str(c + 1) for c, gone in enumerate(diff.absent) if gone and c > 0]
    if others:
        summary += f"; run{'s' * (len(others) != 1)} {', '.join(others)} never got this far"
    return summary


class LineDiffView(QWidget):
    shown = Signal(int)  # the step index whose requests are now on screen
    rewrap = Signal(int)  # the characters a line now holds differ from the shown diff's wrap

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setObjectName("lineDiffTitle")
        self.title.setWordWrap(True)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.splitter, 1)
        self.panes: list[QPlainTextEdit] = []
        self.headings: list[QLabel] = []
        self.diff: LineDiff | None = None
        self.step: int | None = None
        self._resized = QTimer(self)
        self._resized.setSingleShot(True)
        self._resized.setInterval(REWRAP_DELAY_MS)
        self._resized.timeout.connect(self._check_width)
        self.splitter.splitterMoved.connect(self._resized.start)

    def clear(self, message: str) -> None:
        self.diff, self.step = None, None
        self.title.setText(message)
        for pane in self.panes:
            pane.clear()

    def show_diff(
        self, step: int, titles: list[str], diff: LineDiff, *, keep_place: bool = False
    ) -> None:
        """Shows step ``step``'s aligned request lines; ``titles[i]`` heads run ``i``'s pane.
        ``keep_place``: the same lines rewrapped, scrolled to where the user was (else to the
        first difference)."""
        scroll = self.panes[0].verticalScrollBar() if keep_place and self.panes else None
        place = scroll.value() / max(1, scroll.maximum()) if scroll is not None else 0.0
        self.diff, self.step = diff, step
        self._ensure_panes(len(titles))
        self.title.setText(f"What the model saw at step {step} — {diff_summary(diff)}")
        # Panes are kept for reuse: after a 4-run comparison, a 2-run one fills the first two.
        count = len(titles)
        for column, (pane, heading, title) in enumerate(
            zip(self.panes[:count], self.headings[:count], titles, strict=True)
        ):
            clipped = diff.clipped[column]
            heading.setText(
                title + (f" ({clipped:,} lines past the limit not shown)" if clipped else "")
            )
            self._fill(pane, column)
        if scroll is not None:
            self._scrolled(round(place * scroll.maximum()))
        else:
            first = next(
                (r for r, row in enumerate(diff.rows) if any(c.kind != "same" for c in row)), 0
            )
            self._scrolled(max(0, first - 3))  # the first difference in view, with some context
        self.shown.emit(step)

    def wrap_width(self, count: int) -> int:
        """The characters a line of the narrowest of ``count`` panes holds."""
        sizes = self.splitter.sizes()[:count]
        if len(sizes) == count and min(sizes) > 0:
            width = min(sizes)
        else:  # the panes are not laid out yet: share the splitter's width
            width = (self.splitter.width() - self.splitter.handleWidth() * (count - 1)) // count
        style = self.style()
        chrome = (  # the scroll bar, the frame, the document's margin, a spare pixel or two
            style.pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
            + 2 * style.pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth)
            + 12
        )
        char = QFontMetricsF(monospace_font()).horizontalAdvance("M")  # may be 7.2 px
        return max(MIN_WRAP, int((width - chrome) / max(1.0, char)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._resized.start()

    def _check_width(self) -> None:
        if self.diff is not None and self.step is not None:
            wrap = self.wrap_width(len(self.diff.absent))
            if wrap != self.diff.wrap:
                self.rewrap.emit(wrap)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.diff is not None:
            for column in range(len(self.diff.clipped)):
                self._fill(self.panes[column], column)  # tints for the new light / dark palette

    def line_kinds(self, column: int) -> list[DiffKind]:
        return [row[column].kind for row in self.diff.rows] if self.diff else []

    def _ensure_panes(self, count: int) -> None:
        while len(self.panes) < count:
            box = QWidget()
            layout = QVBoxLayout(box)
            layout.setContentsMargins(0, 0, 0, 0)
            heading = QLabel()
            pane = QPlainTextEdit()
            pane.setReadOnly(True)
            pane.setUndoRedoEnabled(False)
            pane.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            pane.setFont(monospace_font())
            pane.verticalScrollBar().valueChanged.connect(self._scrolled)
            layout.addWidget(heading)
            layout.addWidget(pane, 1)
            self.splitter.addWidget(box)
            self.panes.append(pane)
            self.headings.append(heading)
        for position in range(self.splitter.count()):
            shown = self.splitter.widget(position)
            if shown is not None:
                shown.setVisible(position < count)

    def _scrolled(self, value: int) -> None:
        # The panes hold the same number of lines, so one position fits them all.
        for pane in self.panes:
            pane.verticalScrollBar().setValue(value)

    def _fill(self, pane: QPlainTextEdit, column: int) -> None:
        assert self.diff is not None
        lines = [(row[column].text, row[column].kind) for row in self.diff.rows]
        fill_tinted(pane, lines, self.palette())
