"""The validator code editor: highlighting, gutter, problems, find, keys, save and file watching."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QAction, QHelpEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QMainWindow, QToolTip
from pytestqt.qtbot import QtBot

from inspector.app.validators.python_file_editor import PythonFileEditor
from inspector.app.widgets.code_editor import CodeEditor
from inspector.app.widgets.find_bar import FindBar

SOURCE = '''def check(output, ctx):
    """Validators return None, False or a message.

    This docstring spans lines.
    """
    if "*" in output:  # markdown
        return "Plain text only."
    return None
'''


def formats_of(editor: CodeEditor, line: int) -> list[tuple[int, int, str]]:
    block = editor.document().findBlockByNumber(line - 1)
    return [
        (f.start, f.length, f.format.foreground().color().name()) for f in block.layout().formats()
    ]


def colour_at(editor: CodeEditor, line: int, column: int) -> str | None:
    for start, length, colour in formats_of(editor, line):
        if start <= column < start + length:
            return colour
    return None


@pytest.fixture
def editor(qtbot: QtBot) -> CodeEditor:
    widget = CodeEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    return widget


@pytest.fixture
def file_editor(qtbot: QtBot) -> PythonFileEditor:
    widget = PythonFileEditor()
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    return widget


def show_focused(qtbot: QtBot, widget: PythonFileEditor | CodeEditor, focus: CodeEditor) -> None:
    widget.show()
    qtbot.waitExposed(widget)
    widget.activateWindow()
    focus.setFocus()
    qtbot.waitUntil(focus.hasFocus)


# -- highlighting ------------------------------------------------------------------------------


def test_keyword_string_and_comment_get_different_formats(editor: CodeEditor) -> None:
    editor.setPlainText(SOURCE)
    keyword = colour_at(editor, 1, 0)  # def
    string = colour_at(editor, 7, 16)  # "Plain text only."
    comment = colour_at(editor, 6, 24)  # # markdown
    assert None not in (keyword, string, comment)
    assert len({keyword, string, comment}) == 3
    # Plain names are left unformatted.
    assert colour_at(editor, 6, 16) is None  # output


def test_triple_quoted_string_is_a_string_on_its_middle_lines(editor: CodeEditor) -> None:
    editor.setPlainText(SOURCE)
    string = colour_at(editor, 7, 16)
    assert colour_at(editor, 3, 0) is None  # empty line inside the docstring: nothing to colour
    assert formats_of(editor, 4) == [(0, len("    This docstring spans lines."), string)]
    # Closing the string by an edit above re-highlights the following lines as code.
    cursor = QTextCursor(editor.document().findBlockByNumber(1))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    cursor.insertText('"""')
    assert colour_at(editor, 4, 4) != string


def test_dark_palette_switches_to_a_dark_style(editor: CodeEditor) -> None:
    editor.setPlainText(SOURCE)
    light = colour_at(editor, 1, 0)
    editor.highlighter.set_dark(True)
    assert editor.highlighter.style_name() == "github-dark"
    assert colour_at(editor, 1, 0) not in (None, light)


# -- gutter, current line, problems ----------------------------------------------------------


def test_gutter_grows_with_the_line_count(editor: CodeEditor) -> None:
    editor.setPlainText("x = 1\n" * 5)
    narrow = editor.gutter_width()
    assert editor.viewportMargins().left() == narrow
    editor.setPlainText("x = 1\n" * 1500)
    assert editor.gutter_width() > narrow
    assert editor.viewportMargins().left() == editor.gutter_width()


def test_current_line_selection_follows_the_cursor(editor: CodeEditor) -> None:
    editor.setPlainText(SOURCE)
    editor.go_to_line(6)
    [line] = editor.selection_layer("line")
    assert line.cursor.blockNumber() == 5
    editor.moveCursor(QTextCursor.MoveOperation.Down)
    [line] = editor.selection_layer("line")
    assert line.cursor.blockNumber() == 6
    assert editor.textCursor().blockNumber() == 6


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # the offscreen tooltip
def test_problems_mark_lines_and_show_their_message_as_tooltip(
    qtbot: QtBot, editor: CodeEditor
) -> None:
    editor.setPlainText(SOURCE)
    show_focused(qtbot, editor, editor)
    editor.set_problems([(7, "NameError: name 'x' is not defined"), (99, "past the end")])
    assert editor.problems() == [(7, "NameError: name 'x' is not defined"), (9, "past the end")]
    marked = {s.cursor.blockNumber() + 1 for s in editor.selection_layer("problems")}
    assert marked == {7, 9}
    assert editor.problem_at(7) == "NameError: name 'x' is not defined"
    assert editor.problem_at(6) is None

    y = (
        editor.blockBoundingGeometry(editor.document().findBlockByNumber(6))
        .translated(editor.contentOffset())
        .center()
        .y()
    )
    for widget in (editor.viewport(), editor.gutter):
        position = QPoint(4, round(y))
        event = QHelpEvent(QEvent.Type.ToolTip, position, widget.mapToGlobal(position))
        widget.event(event) if widget is editor.gutter else editor.viewportEvent(event)
        qtbot.waitUntil(QToolTip.isVisible)
        assert QToolTip.text() == "NameError: name 'x' is not defined"
        QToolTip.hideText()
    editor.set_problems([])
    assert editor.selection_layer("problems") == []


def test_tab_inserts_four_spaces_and_shift_tab_removes_them(
    qtbot: QtBot, editor: CodeEditor
) -> None:
    editor.setPlainText("x")
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "    x"
    qtbot.keyClick(editor, Qt.Key.Key_Backtab)
    assert editor.toPlainText() == "x"


def test_undo_and_redo_keys(qtbot: QtBot) -> None:
    # A window-wide action on a redo key must not take it from the focused editor.
    window = QMainWindow()
    qtbot.addWidget(window)
    editor = CodeEditor()
    window.setCentralWidget(editor)
    stolen = QAction(window)
    stolen.setShortcut(QKeySequence("Ctrl+Y"))
    window.addAction(stolen)
    show_focused(qtbot, window, editor)  # type: ignore[arg-type]
    qtbot.keyClicks(editor, "abc")
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText() == ""
    qtbot.keyClick(
        editor,
        Qt.Key.Key_Z,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert editor.toPlainText() == "abc"
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    with qtbot.assertNotEmitted(stolen.triggered):
        qtbot.keyClick(editor, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText() == "abc"


# -- find --------------------------------------------------------------------------------------


def test_ctrl_f_opens_the_find_bar_which_counts_and_wraps(qtbot: QtBot) -> None:
    # The window already binds Ctrl+F and Esc: the focused editor must win.
    window = QMainWindow()
    qtbot.addWidget(window)
    file_editor = PythonFileEditor()
    window.setCentralWidget(file_editor)
    window_keys = []
    for keys in ("Ctrl+F", "Esc"):
        action = QAction(window)
        action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _=False, k=keys: window_keys.append(k))
        window.addAction(action)
    editor, bar = file_editor.editor, file_editor.find_bar
    editor.setPlainText("Output output\nno match here\nOUTPUT\n")
    show_focused(qtbot, window, editor)  # type: ignore[arg-type]

    qtbot.keyClick(editor, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible()
    assert bar.line_edit.hasFocus()
    qtbot.keyClicks(bar.line_edit, "output")
    assert bar.count_label.text() == "1 of 3"
    assert len(editor.selection_layer("find")) == 3
    assert editor.textCursor().selectedText() == "Output"

    qtbot.keyClick(bar.line_edit, Qt.Key.Key_Return)
    assert bar.count_label.text() == "2 of 3"
    qtbot.keyClick(bar.line_edit, Qt.Key.Key_F3)
    assert bar.count_label.text() == "3 of 3"
    qtbot.keyClick(bar.line_edit, Qt.Key.Key_Return)  # wraps to the first
    assert bar.count_label.text() == "1 of 3"
    qtbot.keyClick(bar.line_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count_label.text() == "3 of 3"  # and back to the last
    assert editor.textCursor().selectedText() == "OUTPUT"

    bar.match_case.setChecked(True)
    assert bar.count_label.text() == "1 of 1"
    assert editor.textCursor().selectedText() == "output"
    qtbot.keyClicks(bar.line_edit, "z")
    assert bar.count_label.text() == "No matches"
    qtbot.keyClick(bar.line_edit, Qt.Key.Key_Backspace)

    qtbot.keyClick(bar.line_edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert editor.hasFocus()
    assert editor.selection_layer("find") == []
    # F3 in the editor finds the last query again, reopening the bar; the focus stays.
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    qtbot.keyClick(editor, Qt.Key.Key_F3)
    assert bar.isVisible()
    assert editor.hasFocus()
    assert editor.textCursor().selectionStart() == len("Output ")
    assert bar.count_label.text() == "1 of 1"
    assert window_keys == []


def test_find_bar_works_on_a_bare_code_editor(qtbot: QtBot, editor: CodeEditor) -> None:
    bar = FindBar(editor)
    qtbot.addWidget(bar)
    editor.setPlainText("a\nb\na\n")
    bar.open_bar()
    bar.line_edit.setText("a")
    assert bar.matches() == [(0, 1), (4, 5)]
    bar.find_previous()
    assert bar.current_index() == 1
    editor.setPlainText("a a a")  # an edit while open recounts
    assert len(bar.matches()) == 3


# -- the file editor ---------------------------------------------------------------------------


def test_ctrl_s_saves_and_emits_saved_even_when_unchanged(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(path)
    assert file_editor.path() == path
    assert file_editor.text() == SOURCE
    assert not file_editor.is_modified()
    show_focused(qtbot, file_editor, file_editor.editor)

    with qtbot.waitSignal(file_editor.modifiedChanged) as modified:
        qtbot.keyClicks(file_editor.editor, "# top")
    qtbot.keyClick(file_editor.editor, Qt.Key.Key_Return)
    assert modified.args == [True]
    assert file_editor.modified_label.isVisible()
    with qtbot.waitSignal(file_editor.saved) as saved:
        qtbot.keyClick(file_editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved.args == [str(path)]
    assert path.read_text(encoding="utf-8") == "# top\n" + SOURCE
    assert not file_editor.is_modified()
    assert not file_editor.modified_label.isVisible()
    assert [p.name for p in tmp_path.iterdir()] == ["validators.py"]  # no temp file left

    with qtbot.waitSignal(file_editor.saved):
        qtbot.keyClick(file_editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    # The watcher's view of our own save is not an outside change.
    with qtbot.assertNotEmitted(file_editor.reloaded):
        file_editor.check_disk()
    assert not file_editor.notice.isVisible()


def test_missing_file_is_created_on_first_save(
    file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "new_validators.py"
    file_editor.open_file(path)
    assert file_editor.text() == ""
    file_editor.editor.setPlainText("def check(output, ctx):\n    return None\n")
    assert file_editor.save()
    assert path.read_text(encoding="utf-8") == "def check(output, ctx):\n    return None\n"


def test_crlf_line_endings_are_kept(file_editor: PythonFileEditor, tmp_path: Path) -> None:
    path = tmp_path / "validators.py"
    path.write_bytes(b"a = 1\r\nb = 2\r\n")
    file_editor.open_file(path)
    assert file_editor.text() == "a = 1\nb = 2\n"
    assert file_editor.save()
    assert path.read_bytes() == b"a = 1\r\nb = 2\r\n"


def test_outside_write_reloads_and_keeps_the_cursor_line(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(path)
    file_editor.editor.go_to_line(6)
    with qtbot.waitSignal(file_editor.reloaded, timeout=5000) as reloaded:
        path.write_text(SOURCE.replace("markdown", "no markdown"), encoding="utf-8")
    assert reloaded.args == [str(path)]
    assert "# no markdown" in file_editor.text()
    assert not file_editor.is_modified()
    assert file_editor.editor.textCursor().blockNumber() == 5


def test_outside_write_with_unsaved_edits_asks_and_keeps_the_edits(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(path)
    file_editor.show()
    file_editor.editor.textCursor().insertText("# mine\n")
    assert file_editor.is_modified()
    path.write_text("# theirs\n", encoding="utf-8")
    qtbot.waitUntil(file_editor.notice.isVisible, timeout=5000)
    assert file_editor.text() == "# mine\n" + SOURCE
    assert file_editor.is_modified()

    file_editor.keep_button.click()
    assert not file_editor.notice.isVisible()
    assert file_editor.text() == "# mine\n" + SOURCE

    path.write_text("# theirs again\n", encoding="utf-8")
    qtbot.waitUntil(file_editor.notice.isVisible, timeout=5000)
    with qtbot.waitSignal(file_editor.reloaded):
        file_editor.reload_button.click()
    assert file_editor.text() == "# theirs again\n"
    assert not file_editor.is_modified()
    assert not file_editor.notice.isVisible()


def test_opening_another_file_keeps_the_unsaved_edits_as_a_draft(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    first, second = tmp_path / "checks.py", tmp_path / "more.py"
    first.write_text(SOURCE, encoding="utf-8")
    second.write_text("# more\n", encoding="utf-8")
    file_editor.open_file(first)
    file_editor.show()
    file_editor.editor.textCursor().insertText("# mine\n")

    file_editor.show_problems([(1, "NameError: x")])
    file_editor.open_file(second)
    assert file_editor.text() == "# more\n" and not file_editor.is_modified()
    assert file_editor.editor.problems() == [] and file_editor.problems_label.isHidden()
    assert file_editor.drafts() == [first]
    file_editor.open_file(first)
    assert file_editor.text() == "# mine\n" + SOURCE and file_editor.is_modified()
    assert file_editor.drafts() == [] and not file_editor.notice.isVisible()
    assert first.read_text(encoding="utf-8") == SOURCE  # nothing saved behind the user's back

    # Changed on disk while away: the edits come back, and the notice asks.
    file_editor.open_file(second)
    first.write_text("# theirs\n", encoding="utf-8")
    file_editor.open_file(first)
    assert file_editor.text() == "# mine\n" + SOURCE and file_editor.notice.isVisible()
    assert file_editor.save()
    assert first.read_text(encoding="utf-8") == "# mine\n" + SOURCE

    # Unreadable when opened again: the edits wait until it can be read.
    file_editor.editor.textCursor().insertText("# more mine\n")
    file_editor.open_file(second)
    first.write_bytes(b"\xff\xfe not utf-8")
    file_editor.open_file(first)
    assert file_editor.editor.isReadOnly() and file_editor.drafts() == [first]
    file_editor.open_file(second)
    first.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(first)
    assert "# more mine\n" in file_editor.text() and file_editor.is_modified()


def test_a_file_deleted_or_renamed_on_disk_is_said_and_its_text_kept(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(path)
    file_editor.show()
    os.rename(path, tmp_path / "renamed.py")
    qtbot.waitUntil(lambda: file_editor.error() is not None, timeout=5000)
    assert "validators.py is no longer on disk" in file_editor.problems_label.text()
    assert file_editor.text() == SOURCE

    os.rename(tmp_path / "renamed.py", path)  # back as it was: nothing to reload
    qtbot.waitUntil(lambda: file_editor.error() is None, timeout=5000)
    os.remove(path)
    qtbot.waitUntil(lambda: file_editor.error() is not None, timeout=5000)
    assert file_editor.save()  # writes it again
    assert path.read_text(encoding="utf-8") == SOURCE and file_editor.error() is None


def test_atomic_replace_by_another_editor_is_picked_up_every_time(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(path)
    for round_ in range(2):  # the second one proves the path is watched again
        temp = tmp_path / f".validators.py.swp{round_}"
        temp.write_text(f"# version {round_}\n", encoding="utf-8")
        with qtbot.waitSignal(file_editor.reloaded, timeout=5000):
            os.replace(temp, path)
        assert file_editor.text() == f"# version {round_}\n"


def test_read_error_gives_a_one_line_message_and_never_saves_over_the_file(
    qtbot: QtBot, file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_bytes(b"x = '\xff\xfe'\n")
    file_editor.open_file(path)
    error = file_editor.error()
    assert error == "Cannot read validators.py: not UTF-8 text (byte 5)"
    assert error in file_editor.problems_label.text()
    assert file_editor.problems_label.isVisibleTo(file_editor)
    assert file_editor.editor.isReadOnly()
    assert not file_editor.save()
    assert path.read_bytes() == b"x = '\xff\xfe'\n"
    # Fixed outside: it loads and becomes editable.
    with qtbot.waitSignal(file_editor.reloaded, timeout=5000):
        path.write_text("x = 'ok'\n", encoding="utf-8")
    assert file_editor.text() == "x = 'ok'\n"
    assert file_editor.error() is None
    assert not file_editor.editor.isReadOnly()


def test_write_error_keeps_the_buffer(file_editor: PythonFileEditor, tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("", encoding="utf-8")
    file_editor.open_file(blocker / "validators.py")
    file_editor.editor.textCursor().insertText("x = 1\n")
    assert not file_editor.save()
    assert file_editor.error() == "Cannot save validators.py: Not a directory"
    assert file_editor.text() == "x = 1\n"
    assert file_editor.is_modified()


def test_problems_line_lists_problems_and_goes_to_their_line(
    file_editor: PythonFileEditor, tmp_path: Path
) -> None:
    path = tmp_path / "validators.py"
    path.write_text(SOURCE, encoding="utf-8")
    file_editor.open_file(path)
    file_editor.show_problems([(6, "SyntaxError: invalid syntax\nmore detail")])
    assert file_editor.editor.problems() == [(6, "SyntaxError: invalid syntax\nmore detail")]
    label = file_editor.problems_label
    assert label.isVisibleTo(file_editor)
    assert 'href="6"' in label.text()
    assert "SyntaxError: invalid syntax" in label.text()
    assert "more detail" not in label.text()
    label.linkActivated.emit("6")
    assert file_editor.editor.textCursor().blockNumber() == 5
    file_editor.clear_problems()
    assert file_editor.editor.problems() == []
    assert not label.isVisibleTo(file_editor)


def test_enter_keeps_the_indent_and_opens_a_block_after_a_colon(
    qtbot: QtBot, editor: CodeEditor
) -> None:
    editor.setPlainText("def check(output, ctx):")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "if output:  # empty?")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "return False")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor, "x")
    assert editor.toPlainText() == (
        "def check(output, ctx):\n    if output:  # empty?\n        return False\n        x"
    )
    # One undo takes back one Enter with its indent.
    editor.undo()
    editor.undo()
    assert editor.toPlainText().endswith("return False")
