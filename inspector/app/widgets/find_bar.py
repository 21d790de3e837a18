"""A find bar for a ``CodeEditor``: Ctrl+F (while the editor has the focus) opens it, Enter/F3
finds the next match, Shift+Enter/Shift+F3 the previous one (both wrap around), Esc closes it and
gives the focus back to the editor. Every match is tinted; the current one is selected."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTextEdit,
    QToolButton,
    QWidget,
)

from inspector.app.widgets.code_editor import CodeEditor, KeyGrabber

MATCH_LIMIT = 10_000  # beyond this the count stops: enough to say "many", cheap to compute
MATCH_COLOUR = QColor(242, 190, 40, 110)


class FindBar(QWidget):
    def __init__(self, editor: CodeEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self._matches: list[tuple[int, int]] = []  # (start, end) document positions
        self.line_edit = QLineEdit(self)
        self.line_edit.setPlaceholderText("Find")
        self.line_edit.setClearButtonEnabled(True)
        self.previous_button = self._button("▲", "Previous match (Shift+Enter, Shift+F3)")
        self.next_button = self._button("▼", "Next match (Enter, F3)")
        self.match_case = QCheckBox("Match case", self)
        self.count_label = QLabel(self)
        self.close_button = self._button("✕", "Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.line_edit, 1)
        for widget in (self.previous_button, self.next_button, self.match_case, self.count_label):
            layout.addWidget(widget)
        layout.addWidget(self.close_button)

        self.line_edit.textChanged.connect(self._search_from_anchor)
        self.match_case.toggled.connect(self._search_from_anchor)
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        self.close_button.clicked.connect(self.close_bar)
        editor.document().contentsChanged.connect(self._document_changed)
        editor.cursorPositionChanged.connect(self._cursor_moved)

        # Keys while the bar has the focus (propagated from its children to this widget) ...
        own = KeyGrabber(self)
        for keys in ("Return", "Enter", "F3"):
            own.add(keys, self.find_next)
        for keys in ("Shift+Return", "Shift+Enter", "Shift+F3"):
            own.add(keys, self.find_previous)
        own.add("Esc", self.close_bar)
        self.installEventFilter(own)
        # ... and while the editor has it.
        self.editor.keys.add("Ctrl+F", self.open_bar)
        self.editor.keys.add("F3", self._next_from_editor, self._has_query)
        self.editor.keys.add("Shift+F3", self._previous_from_editor, self._has_query)
        self.editor.keys.add("Esc", self.close_bar, self.isVisible)
        self.hide()

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    def _has_query(self) -> bool:
        return bool(self.line_edit.text())

    def open_bar(self) -> None:
        """Show the bar with the editor's one-line selection as the query, focused."""
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.line_edit.setText(selected)  # searches from the anchor
        self.show()
        self._search_from_anchor()
        self.line_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.line_edit.selectAll()

    def _reopen(self) -> None:
        """F3 in the editor after the bar was closed: show it again, keep the focus."""
        if not self.isVisible():
            self.show()
            self._collect()

    def _next_from_editor(self) -> None:
        self._reopen()
        self.find_next()

    def _previous_from_editor(self) -> None:
        self._reopen()
        self.find_previous()

    def close_bar(self) -> None:
        self.hide()
        self._matches = []
        self.editor.set_selection_layer("find", [])
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def matches(self) -> list[tuple[int, int]]:
        return list(self._matches)

    def current_index(self) -> int | None:
        """Index of the match the editor's selection is on, or None."""
        cursor = self.editor.textCursor()
        span = (cursor.selectionStart(), cursor.selectionEnd())
        return self._matches.index(span) if span in self._matches else None

    def find_next(self) -> None:
        if not self._matches:
            return
        after = self.editor.textCursor().selectionEnd()
        if self.current_index() is None:
            after = self.editor.textCursor().selectionStart()
        following = [m for m in self._matches if m[0] >= after]
        self._select(following[0] if following else self._matches[0])

    def find_previous(self) -> None:
        if not self._matches:
            return
        before = self.editor.textCursor().selectionStart()
        preceding = [m for m in self._matches if m[1] <= before and m[0] < before]
        self._select(preceding[-1] if preceding else self._matches[-1])

    def _select(self, match: tuple[int, int]) -> None:
        cursor = self.editor.textCursor()
        cursor.setPosition(match[0])
        cursor.setPosition(match[1], QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self._update_label()

    def _collect(self) -> None:
        self._matches = []
        query = self.line_edit.text()
        if query and self.isVisible():
            flags = QTextDocument.FindFlag(0)
            if self.match_case.isChecked():
                flags |= QTextDocument.FindFlag.FindCaseSensitively
            doc = self.editor.document()
            cursor = doc.find(query, 0, flags)
            while not cursor.isNull() and len(self._matches) < MATCH_LIMIT:
                self._matches.append((cursor.selectionStart(), cursor.selectionEnd()))
                cursor = doc.find(query, cursor, flags)
        selections: list[QTextEdit.ExtraSelection] = []
        for start, end in self._matches:
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(MATCH_COLOUR)
            cursor = self.editor.textCursor()
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selections.append(selection)
        self.editor.set_selection_layer("find", selections)

    def _search_from_anchor(self) -> None:
        """Typing searches again from where the current selection starts (incremental find)."""
        self._collect()
        if self._matches:
            start = self.editor.textCursor().selectionStart()
            following = [m for m in self._matches if m[0] >= start]
            self._select(following[0] if following else self._matches[0])
        self._update_label()

    def _document_changed(self) -> None:
        if self.isVisible() and self.line_edit.text():
            self._collect()
            self._update_label()

    def _cursor_moved(self) -> None:
        if self.isVisible():
            self._update_label()

    def _update_label(self) -> None:
        if not self.line_edit.text():
            self.count_label.setText("")
        elif not self._matches:
            self.count_label.setText("No matches")
        else:
            index = self.current_index()
            total = f"{len(self._matches)}{'+' if len(self._matches) >= MATCH_LIMIT else ''}"
            self.count_label.setText(f"{'?' if index is None else index + 1} of {total}")
