"""What the model saw at one step in each run, side by side: one read-only text pane per run,
lines aligned across the panes and scrolled together, lines that differ from the first run
tinted (added green, removed red, changed yellow) in colours for a light or dark palette."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QPalette, QTextBlockFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from inspector.app.compare_delegate import mix
from inspector.app.compare_lines import DiffKind, LineDiff
from inspector.app.json_view import is_dark, monospace_font

# kind: (light, dark) background
DIFF_COLOURS: dict[str, tuple[str, str]] = {
    "added": ("#d4f4dc", "#1f4d2b"),
    "removed": ("#fbd8d6", "#5c2626"),
    "changed": ("#fbf0c0", "#504520"),
}
DIFFERENT = frozenset(DIFF_COLOURS)


def diff_colour(kind: DiffKind, palette: QPalette) -> QColor | None:
    """The background of a line of ``kind`` (None: the pane's own)."""
    if kind == "filler":
        return mix(
            palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.06
        )
    colours = DIFF_COLOURS.get(kind)
    return QColor(colours[1 if is_dark(palette) else 0]) if colours else None


class LineDiffView(QWidget):
    shown = Signal(int)  # the step index whose requests are now on screen

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

    def clear(self, message: str) -> None:
        self.diff, self.step = None, None
        self.title.setText(message)
        for pane in self.panes:
            pane.clear()

    def show_diff(self, step: int, titles: list[str], diff: LineDiff) -> None:
        """Shows step ``step``'s aligned request lines; ``titles[i]`` heads run ``i``'s pane."""
        self.diff, self.step = diff, step
        self._ensure_panes(len(titles))
        changed = sum(1 for row in diff.rows if any(c.kind in DIFFERENT for c in row))
        self.title.setText(
            f"What the model saw at step {step} — each run against run 1: "
            + (f"{changed} line{'s' * (changed != 1)} differ" if changed else "the same")
        )
        for column, (pane, heading, title) in enumerate(
            zip(self.panes, self.headings, titles, strict=True)
        ):
            clipped = diff.clipped[column]
            heading.setText(
                title + (f" ({clipped:,} lines past the limit not shown)" if clipped else "")
            )
            self._fill(pane, column)
        first = next(
            (r for r, row in enumerate(diff.rows) if any(c.kind != "same" for c in row)), 0
        )
        self._scrolled(max(0, first - 3))  # the first difference in view, with some context
        self.shown.emit(step)

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
        rows = self.diff.rows
        pane.setPlainText("\n".join(row[column].text for row in rows))
        palette = self.palette()
        formats: dict[DiffKind, QTextBlockFormat] = {}
        for kind in ("added", "removed", "changed", "filler"):
            colour = diff_colour(kind, palette)
            if colour is not None:
                formats[kind] = QTextBlockFormat()
                formats[kind].setBackground(colour)
        cursor = QTextCursor(pane.document())
        cursor.beginEditBlock()
        block = pane.document().begin()
        for row in rows:
            block_format = formats.get(row[column].kind)
            if block_format is not None:
                cursor.setPosition(block.position())
                cursor.setBlockFormat(block_format)
            block = block.next()
        cursor.endEditBlock()
