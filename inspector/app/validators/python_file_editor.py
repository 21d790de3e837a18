"""An editor for one Python file on disk: a header (path, "●" when modified), the code editor
with its find bar, and a problems line (click a problem to go to its line).

The file is watched. A change made outside the app reloads the buffer when it has no unsaved
edits; otherwise a notice offers "Reload from disk" / "Keep mine", so edits are never lost. Saves
are atomic (temp file + ``os.replace``); editors that save the same way drop the path from the
watcher, so it is re-added and the folder is watched too. Our own save is recognised by content
(the bytes last read or written), so it never counts as an outside change. Read and write errors
become a one-line message in the problems line; the buffer is kept.

Opening another file keeps the unsaved edits of the one left as a draft: opening it again brings
them back (marked modified, with the notice when the file changed on disk meanwhile).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, Qt, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from inspector.app.widgets.code_editor import CodeEditor, KeyGrabber
from inspector.app.widgets.find_bar import FindBar
from inspector.core.files import write_atomically

# Watcher events come in bursts (temp file written, renamed, folder changed): one check after.
CHECK_DELAY_MS = 60
ERROR_COLOUR = "#d1242f"
NOTICE_STYLE = (
    "#diskNotice { background: rgba(212, 167, 44, 0.16); "
    "border: 1px solid rgba(212, 167, 44, 0.6); border-radius: 4px; }"
)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _gone(path: Path) -> str:
    return f"{path.name} is no longer on disk (deleted or renamed): saving writes it again"


@dataclass(frozen=True)
class _Draft:
    """A file's unsaved edits, kept while another file is open."""

    text: str
    disk_bytes: bytes | None  # what the file held when last read or written
    newline: str
    position: int


class PythonFileEditor(QWidget):
    saved = Signal(str)  # path, after a successful save
    reloaded = Signal(str)  # path, after the file changed on disk and was reloaded
    modifiedChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._path: Path | None = None
        self._disk_bytes: bytes | None = None  # what the file held when last read or written
        self._pending: bytes | None = None  # an outside version not taken yet (notice shown)
        self._newline = "\n"
        self._unreadable = False  # the file could not be loaded: saving would destroy it
        self._error: str | None = None
        self._drafts: dict[Path, _Draft] = {}

        self.path_label = QLabel("No file", self)
        self.path_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.modified_label = QLabel("●", self)
        self.modified_label.setToolTip("Unsaved changes (Ctrl+S saves)")
        self.modified_label.hide()
        header = QHBoxLayout()
        header.setContentsMargins(4, 2, 4, 2)
        header.addWidget(self.path_label, 1)
        header.addWidget(self.modified_label)

        self.notice = QFrame(self)
        self.notice.setObjectName("diskNotice")
        self.notice.setStyleSheet(NOTICE_STYLE)
        self.notice_label = QLabel(self.notice)
        self.reload_button = QPushButton("Reload from disk", self.notice)
        self.keep_button = QPushButton("Keep mine", self.notice)
        notice_layout = QHBoxLayout(self.notice)
        notice_layout.setContentsMargins(6, 2, 6, 2)
        notice_layout.addWidget(self.notice_label, 1)
        notice_layout.addWidget(self.reload_button)
        notice_layout.addWidget(self.keep_button)
        self.notice.hide()
        self.reload_button.clicked.connect(self._take_disk_version)
        self.keep_button.clicked.connect(self._keep_mine)

        self.editor = CodeEditor(self)
        self.setFocusProxy(self.editor)
        self.find_bar = FindBar(self.editor, self)
        self.problems_label = QLabel(self)
        self.problems_label.setTextFormat(Qt.TextFormat.RichText)
        self.problems_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.problems_label.linkActivated.connect(self._go_to_problem)
        self.problems_label.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.notice)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.problems_label)

        # Ctrl+S from anywhere inside this widget (key events propagate up to it).
        keys = KeyGrabber(self)
        keys.add("Ctrl+S", self._save_key)
        self.installEventFilter(keys)

        self.editor.document().modificationChanged.connect(self._modification_changed)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._schedule_check)
        self._watcher.directoryChanged.connect(self._schedule_check)
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_DELAY_MS)
        self._check_timer.timeout.connect(self.check_disk)

    # -- public API ----------------------------------------------------------------------------

    def open_file(self, path: Path) -> None:
        """Load a UTF-8 file; a missing file gives an empty buffer, created on the first save.
        The unsaved edits of the file left are kept as its draft; ``path``'s draft, if any, is
        shown instead of its text."""
        left = self._path
        if left is not None and left != Path(path) and self.is_modified() and not self._unreadable:
            self._drafts[left] = _Draft(
                self.text(), self._disk_bytes, self._newline, self.editor.textCursor().position()
            )
        if self._path != Path(path):
            self.editor.set_problems([])  # the file left's, at its lines
        self._path = Path(path)
        self._disk_bytes = None
        self._pending = None
        self._error = None
        self._newline = "\n"
        self.notice.hide()
        self.path_label.setText(str(self._path))
        self.path_label.setToolTip(str(self._path))
        self._watch()
        try:
            data = self._path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            self._set_text("")
            self._unreadable = False
            self.editor.setReadOnly(False)
        except OSError as exc:
            self._set_text("")
            self._mark_unreadable(f"Cannot read {self._path.name}: {_reason(exc)}")
        else:
            if not self._load(data):
                self._set_text("")  # not the previous file's text under this file's name
        draft = self._drafts.get(self._path)
        if draft is not None and not self._unreadable:  # unreadable now: kept for later
            del self._drafts[self._path]
            self._restore(draft)
        self._render_status()

    def drafts(self) -> list[Path]:
        """The files whose unsaved edits are kept: those left for another file, and the open one
        while it cannot be read (its edits come back once it can)."""
        return list(self._drafts)

    def unsaved(self) -> list[str]:
        """What would be lost on quitting: the open file when modified, and every draft."""
        files = [*self._drafts]
        if self._path is not None and self.is_modified() and self._path not in files:
            files.insert(0, self._path)
        return [f.name for f in files]

    def path(self) -> Path | None:
        return self._path

    def text(self) -> str:
        return self.editor.toPlainText()

    def is_modified(self) -> bool:
        return self.editor.document().isModified()

    def error(self) -> str | None:
        """The last read/write error shown in the problems line, or None."""
        return self._error

    def save(self) -> bool:
        """Write the buffer atomically; always emits ``saved`` on success, even when nothing
        changed (Ctrl+S is how a user asks for re-validation)."""
        path = self._path
        if path is None:
            return False
        if self._unreadable:
            self._set_error(f"Not saved: {path.name} could not be read, so saving would lose it")
            return False
        data = self.text().replace("\n", self._newline).encode("utf-8")
        previous = self._disk_bytes
        # Set before the write: the watcher events it causes then match and are ignored.
        self._disk_bytes = data
        try:
            write_atomically(path, [data])  # through a symlink: the real file
        except OSError as exc:
            self._disk_bytes = previous
            self._set_error(f"Cannot save {path.name}: {_reason(exc)}")
            return False
        self._pending = None
        self.notice.hide()
        self.editor.document().setModified(False)
        self._set_error(None)
        self._watch()
        self.saved.emit(str(path))
        return True

    def show_problems(self, problems: list[tuple[int, str]]) -> None:
        self.editor.set_problems(problems)
        self._render_status()

    def clear_problems(self) -> None:
        self.show_problems([])

    def check_disk(self) -> None:
        """Compare the file on disk with what we last read or wrote, and act on a difference
        (runs after watcher events; harmless to call at any time)."""
        path = self._path
        if path is None:
            return
        self._watch()
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            # Deleted or renamed away (mid-replace, it is back by the next check: the folder
            # watch reports its return). The text stays here; a save writes the file again.
            if self._disk_bytes is not None:
                self._set_error(_gone(path))
            return
        except OSError as exc:
            self._set_error(f"Cannot read {path.name}: {_reason(exc)}")
            return
        if self._error == _gone(path):
            self._set_error(None)  # back on disk
        if data == self._disk_bytes or data == self._pending:
            return
        if self.is_modified() and not self._unreadable:
            self._pending = data
            self.notice_label.setText(
                f"{path.name} changed on disk, and you have unsaved edits here."
            )
            self.notice.show()
            return
        if self._load(data, keep_view=True):
            self.reloaded.emit(str(path))

    # -- loading -------------------------------------------------------------------------------

    def _load(self, data: bytes, keep_view: bool = False) -> bool:
        """Show the file's bytes; on a decoding error the buffer is kept and the error shown."""
        assert self._path is not None
        self._disk_bytes = data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._mark_unreadable(
                f"Cannot read {self._path.name}: not UTF-8 text (byte {exc.start})"
            )
            return False
        self._unreadable = False
        self.editor.setReadOnly(False)
        self._newline = "\r\n" if "\r\n" in text else "\n"
        cursor = self.editor.textCursor()
        line, column = cursor.blockNumber(), cursor.positionInBlock()
        scroll = self.editor.verticalScrollBar().value()
        self._set_text(text.replace("\r\n", "\n"))
        if keep_view:
            block = self.editor.document().findBlockByNumber(
                min(line, self.editor.blockCount() - 1)
            )
            cursor = QTextCursor(block)
            cursor.setPosition(block.position() + min(column, block.length() - 1))
            self.editor.setTextCursor(cursor)
            self.editor.verticalScrollBar().setValue(scroll)
        self._pending = None
        self.notice.hide()
        self._set_error(None)
        return True

    def _set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.editor.document().setModified(False)
        # The problem marks were anchored in the old text: lay them out again on the new one.
        self.editor.set_problems(self.editor.problems())

    def _restore(self, draft: _Draft) -> None:
        self._set_text(draft.text)
        self.editor.document().setModified(True)
        cursor = self.editor.textCursor()
        cursor.setPosition(min(draft.position, len(draft.text)))
        self.editor.setTextCursor(cursor)
        self._disk_bytes, self._newline = draft.disk_bytes, draft.newline
        self.check_disk()  # changed on disk meanwhile: the notice asks which version to keep

    def _mark_unreadable(self, message: str) -> None:
        self._unreadable = True
        self.editor.setReadOnly(True)
        self._set_error(message)

    def _take_disk_version(self) -> None:
        if self._pending is not None and self._path is not None and self._load(self._pending):
            self.reloaded.emit(str(self._path))

    def _keep_mine(self) -> None:
        # The disk version is acknowledged: only a further outside change asks again.
        self._disk_bytes = self._pending
        self._pending = None
        self.notice.hide()

    # -- watching ------------------------------------------------------------------------------

    def _watch(self) -> None:
        """Watch the file and its folder; re-adds the file after a replace dropped it."""
        wanted: list[str] = []
        if self._path is not None:
            for candidate in (self._path, self._path.parent):
                if candidate.exists():
                    wanted.append(str(candidate))
        watched = set(self._watcher.files()) | set(self._watcher.directories())
        stale = [p for p in watched if p not in wanted]
        if stale:
            self._watcher.removePaths(stale)
        missing = [p for p in wanted if p not in watched]
        if missing:
            self._watcher.addPaths(missing)

    def _schedule_check(self, _path: str) -> None:
        self._check_timer.start()

    # -- status --------------------------------------------------------------------------------

    def _save_key(self) -> None:
        self.save()

    def _modification_changed(self, modified: bool) -> None:
        self.modified_label.setVisible(modified)
        self.modifiedChanged.emit(modified)

    def _set_error(self, message: str | None) -> None:
        self._error = message.splitlines()[0] if message else None
        self._render_status()

    def _render_status(self) -> None:
        parts: list[str] = []
        if self._error:
            parts.append(f'<span style="color:{ERROR_COLOUR}">⚠ {html.escape(self._error)}</span>')
        problems = self.editor.problems()
        for line, message in problems:
            first = message.splitlines()[0] if message else ""
            parts.append(f'<a href="{line}">Line {line}</a>: {html.escape(first)}')
        self.problems_label.setText(" · ".join(parts))
        self.problems_label.setToolTip(
            "\n".join(f"Line {line}: {message}" for line, message in problems)
        )
        self.problems_label.setVisible(bool(parts))

    def _go_to_problem(self, link: str) -> None:
        self.editor.go_to_line(int(link))
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)
