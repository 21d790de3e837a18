"""A plain-text code editor: line-number gutter (Qt's "Code Editor Example" approach),
current-line highlight, Pygments highlighting, 4-space indentation and problem markers.

Extra selections come in named layers (current line, problems, find matches) so each feature
replaces its own without knowing the others. ``KeyGrabber`` lets a widget take keys the window
also binds (Ctrl+F, Esc, Ctrl+S) while it has the focus, by accepting the ShortcutOverride:
a second shortcut on the same keys would make both ambiguous and fire nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from pygments.lexer import Lexer
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from inspector.app.theme import is_dark
from inspector.app.widgets.json_view import monospace_font
from inspector.app.widgets.syntax_highlighter import PygmentsHighlighter
from inspector.editing.python_indent import next_line_indent

INDENT = 4
PROBLEM_COLOUR = QColor(209, 36, 47)
LAYERS = ("line", "problems", "find")  # drawn in this order: later layers paint over earlier ones


class KeyGrabber(QObject):
    """An event filter that claims key sequences on the widgets it is installed on (and, as key
    events propagate to parents, on their children), before any window shortcut sees them."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._keys: list[tuple[QKeySequence, Callable[[], None], Callable[[], bool]]] = []

    def add(
        self, keys: str, action: Callable[[], None], when: Callable[[], bool] = lambda: True
    ) -> None:
        self._keys.append((QKeySequence(keys), action, when))

    def _match(self, event: QKeyEvent) -> Callable[[], None] | None:
        # The keypad's Enter carries KeypadModifier: the plain sequence should match it too.
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        pressed = QKeySequence(event.key() | modifiers.value)
        for sequence, action, when in self._keys:
            if sequence == pressed and when():
                return action
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            assert isinstance(event, QKeyEvent)
            action = self._match(event)
            if action is not None:
                event.accept()
                if kind == QEvent.Type.KeyPress:
                    action()
                return True
        return False


class LineNumberArea(QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_gutter(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            self._editor.show_problem_tooltip(event, self)
            return True
        return super().event(event)


class CodeEditor(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None, lexer: Lexer | None = None) -> None:
        super().__init__(parent)
        self.setFont(monospace_font())
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * INDENT)
        self.highlighter = PygmentsHighlighter(self.document(), lexer, dark=is_dark(self.palette()))
        self._problems: list[tuple[int, str]] = []
        self._layers: dict[str, list[QTextEdit.ExtraSelection]] = {name: [] for name in LAYERS}
        self.gutter = LineNumberArea(self)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self.cursorPositionChanged.connect(self._highlight_current_line)
        self.keys = KeyGrabber(self)
        # Ctrl+Shift+Z and Ctrl+Y both redo, whatever the platform's key theme says.
        self.keys.add("Ctrl+Shift+Z", self.redo)
        self.keys.add("Ctrl+Y", self.redo)
        self.installEventFilter(self.keys)
        self._update_gutter_width()
        self._highlight_current_line()

    # -- gutter --------------------------------------------------------------------------------

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        advance = self.fontMetrics().horizontalAdvance("9")
        return 6 + advance * digits + self._marker_size() + 4

    def _marker_size(self) -> int:
        return max(6, self.fontMetrics().height() // 2)

    def _update_gutter_width(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_gutter_width()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        contents = self.contentsRect()
        self.gutter.setGeometry(
            QRect(contents.left(), contents.top(), self.gutter_width(), contents.height())
        )

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self.gutter)
        palette = self.palette()
        painter.fillRect(event.rect(), palette.window())
        marked = {line for line, _ in self._problems}
        current = self.textCursor().blockNumber()
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        marker = self._marker_size()
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                number = block.blockNumber()
                if number + 1 in marked:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(PROBLEM_COLOUR)
                    painter.drawEllipse(3, top + (height - marker) // 2, marker, marker)
                role = (
                    palette.ColorRole.WindowText
                    if number == current
                    else palette.ColorRole.PlaceholderText
                )
                painter.setPen(palette.color(role))
                painter.drawText(
                    0, top, self.gutter.width() - 4, height,
                    Qt.AlignmentFlag.AlignRight, str(number + 1),
                )  # fmt: skip
            block = block.next()
            top = bottom
        painter.end()

    # -- extra selections ----------------------------------------------------------------------

    def set_selection_layer(self, name: str, selections: list[QTextEdit.ExtraSelection]) -> None:
        """Replace one layer of extra selections ("line", "problems" or "find")."""
        self._layers[name] = selections
        self.setExtraSelections([s for layer in LAYERS for s in self._layers[layer]])

    def selection_layer(self, name: str) -> list[QTextEdit.ExtraSelection]:
        return list(self._layers[name])

    def _highlight_current_line(self) -> None:
        selection = QTextEdit.ExtraSelection()
        colour = self.palette().color(self.palette().ColorRole.Highlight)
        colour.setAlpha(28)
        selection.format.setBackground(colour)
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        cursor = self.textCursor()
        cursor.clearSelection()
        selection.cursor = cursor
        self.set_selection_layer("line", [selection])
        self.gutter.update()

    # -- problems ------------------------------------------------------------------------------

    def set_problems(self, problems: list[tuple[int, str]]) -> None:
        """Mark lines (1-based; clamped to the document) with a red gutter dot, a tinted
        background and a wavy underline; the messages show as tooltips."""
        last = max(1, self.blockCount())
        self._problems = [(min(max(1, line), last), message) for line, message in problems]
        selections: list[QTextEdit.ExtraSelection] = []
        for line in sorted({line for line, _ in self._problems}):
            block = self.document().findBlockByNumber(line - 1)
            background = QTextEdit.ExtraSelection()
            tint = QColor(PROBLEM_COLOUR)
            tint.setAlpha(36)
            background.format.setBackground(tint)
            background.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            background.cursor = QTextCursor(block)
            selections.append(background)
            text = block.text()
            indent = len(text) - len(text.lstrip())
            if indent < len(text):
                underline = QTextEdit.ExtraSelection()
                underline.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                underline.format.setUnderlineColor(PROBLEM_COLOUR)
                cursor = QTextCursor(block)
                cursor.setPosition(block.position() + indent)
                cursor.setPosition(block.position() + len(text), QTextCursor.MoveMode.KeepAnchor)
                underline.cursor = cursor
                selections.append(underline)
        self.set_selection_layer("problems", selections)
        self.gutter.update()

    def problems(self) -> list[tuple[int, str]]:
        return list(self._problems)

    def problem_at(self, line: int) -> str | None:
        """The message(s) for a 1-based line, one per line, or None."""
        messages = [message for number, message in self._problems if number == line]
        return "\n".join(messages) if messages else None

    def line_at(self, y: int) -> int:
        """The 1-based line shown at a viewport/gutter y coordinate."""
        return self.cursorForPosition(QPoint(0, y)).blockNumber() + 1

    def show_problem_tooltip(self, event: QHelpEvent, widget: QWidget) -> None:
        message = self.problem_at(self.line_at(event.pos().y()))
        if message is None:
            QToolTip.hideText()
            event.ignore()
        else:
            QToolTip.showText(event.globalPos(), message, widget)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            self.show_problem_tooltip(event, self.viewport())
            return True
        return super().viewportEvent(event)

    # -- navigation and keys -------------------------------------------------------------------

    def go_to_line(self, line: int) -> None:
        """Put the cursor at the start of a 1-based line (clamped) and scroll it into view."""
        block = self.document().findBlockByNumber(min(max(1, line), self.blockCount()) - 1)
        self.setTextCursor(QTextCursor(block))
        self.centerCursor()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        plain = event.modifiers() == Qt.KeyboardModifier.NoModifier
        if event.key() == Qt.Key.Key_Tab and plain:
            self._indent()
        elif event.key() == Qt.Key.Key_Backtab:
            self._dedent()
        elif event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and plain:
            cursor = self.textCursor()
            before = cursor.block().text()[: cursor.positionInBlock()]
            cursor.insertText("\n" + next_line_indent(before))  # one undo step
            self.setTextCursor(cursor)
        else:
            super().keyPressEvent(event)

    def _selected_blocks(self) -> tuple[int, int]:
        cursor = self.textCursor()
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        end = cursor.selectionEnd()
        last = doc.findBlock(end).blockNumber()
        if last > first and doc.findBlock(end).position() == end:
            last -= 1  # a selection ending at a line start does not take that line
        return first, last

    def _indent(self) -> None:
        cursor = self.textCursor()
        first, last = self._selected_blocks()
        if first == last:
            # Spaces up to the next multiple of INDENT columns.
            column = cursor.selectionStart() - cursor.block().position()
            cursor.insertText(" " * (INDENT - column % INDENT))
            return
        cursor.beginEditBlock()
        for number in range(first, last + 1):
            line = QTextCursor(self.document().findBlockByNumber(number))
            line.insertText(" " * INDENT)
        cursor.endEditBlock()

    def _dedent(self) -> None:
        cursor = self.textCursor()
        first, last = self._selected_blocks()
        cursor.beginEditBlock()
        for number in range(first, last + 1):
            block = self.document().findBlockByNumber(number)
            text = block.text()
            width = min(INDENT, len(text) - len(text.lstrip(" ")))
            if width:
                line = QTextCursor(block)
                line.setPosition(block.position() + width, QTextCursor.MoveMode.KeepAnchor)
                line.removeSelectedText()
        cursor.endEditBlock()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.set_dark(is_dark(self.palette()))
            self._highlight_current_line()
