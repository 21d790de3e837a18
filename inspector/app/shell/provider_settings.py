"""Provider settings: API keys in the OS keyring, never in a file.

A key is stored under service ``"agent-inspector"`` with the environment variable's name as the
username — exactly where ``inspector.providers.http.resolve_api_key`` looks when the variable is
not set. The dialog shows whether a key is stored (and whether the environment overrides it) and
never shows a stored value. Without a usable keyring backend (a headless Linux box with no Secret
Service) it says so and keeps the fields disabled.

Public API: ``ProviderSettingsDialog(parent)``; open it with ``.open()`` or ``.exec()``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import NamedTuple, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.providers.http import KEYRING_SERVICE

# The variables the documented providers use (docs/providers.md, docs/providers-anthropic.md).
KNOWN_KEY_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
T = TypeVar("T")

NO_BACKEND_MESSAGE = (
    "No OS keyring is available, so keys cannot be stored here. Set the environment variable "
    "instead, or install a keyring service (GNOME Keyring or KWallet on Linux; macOS Keychain "
    "and Windows Credential Manager work as they are)."
)


class KeyringUnavailable(Exception):
    """The keyring backend is missing or refused (locked, no D-Bus); the message says which."""


class KeyStatus(NamedTuple):
    name: str
    in_keyring: bool
    in_environment: bool


def valid_key_name(name: str) -> bool:
    """An environment variable name (what ``api_key_env`` holds)."""
    return _ENV_NAME.fullmatch(name) is not None


def keyring_problem() -> str | None:
    """Why keys cannot be stored, or None when a real backend is there."""
    import keyring  # lazily: backend discovery takes a moment
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return NO_BACKEND_MESSAGE
    return None


def _call(action: str, name: str, operation: Callable[[], T]) -> T:
    """Runs a keyring operation; its errors become one readable ``KeyringUnavailable``."""
    from keyring.errors import KeyringError, NoKeyringError

    try:
        return operation()
    except NoKeyringError as exc:
        raise KeyringUnavailable(NO_BACKEND_MESSAGE) from exc
    except KeyringError as exc:
        raise KeyringUnavailable(f"the keyring refused to {action} {name}: {exc}") from exc


def key_is_stored(name: str) -> bool:
    import keyring

    return _call("read", name, lambda: keyring.get_password(KEYRING_SERVICE, name)) is not None


def store_key(name: str, value: str) -> None:
    import keyring

    _call("store", name, lambda: keyring.set_password(KEYRING_SERVICE, name, value))


def remove_key(name: str) -> bool:
    """Deletes the stored key; False when there was none."""
    import keyring
    from keyring.errors import PasswordDeleteError

    if not key_is_stored(name):
        return False
    try:
        _call("remove", name, lambda: keyring.delete_password(KEYRING_SERVICE, name))
    except KeyringUnavailable as exc:
        if isinstance(exc.__cause__, PasswordDeleteError):
            return False
        raise
    return True


def key_status(name: str, environ: Mapping[str, str] | None = None) -> KeyStatus:
    env = os.environ if environ is None else environ
    return KeyStatus(name, key_is_stored(name), bool(env.get(name)))


def status_text(status: KeyStatus) -> str:
    """What the dialog says about one key; never the key itself."""
    if status.in_keyring and status.in_environment:
        return "stored in the keyring; the environment variable is set too and wins"
    if status.in_keyring:
        return "stored in the keyring"
    if status.in_environment:
        return "set in the environment (not stored)"
    return "not set"


class ProviderSettingsDialog(QDialog):
    """Store or remove an API key in the OS keyring, by environment variable name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Provider settings")

        intro = QLabel(
            "Scenarios name their key with <code>api_key_env</code>. The environment variable "
            "of that name wins; when it is not set, the key stored here in the OS keyring (service "
            f"<code>{KEYRING_SERVICE}</code>) is used. Keys are never written to a file, the run "
            "store, exports or logs."
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)

        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Variable", "Key"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.ResizeToContents
        )
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._row_selected)

        self.name_box = QComboBox()
        self.name_box.setEditable(True)
        self.name_box.addItems(KNOWN_KEY_NAMES)
        self.name_box.setToolTip("the scenario's api_key_env; type another name if yours differs")
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("paste the key")
        self.save_button = QPushButton("Store in keyring")
        self.save_button.clicked.connect(self.save_key)
        self.remove_button = QPushButton("Remove from keyring")
        self.remove_button.clicked.connect(self.remove_selected_key)
        buttons_row = QHBoxLayout()
        buttons_row.addWidget(self.save_button)
        buttons_row.addWidget(self.remove_button)
        buttons_row.addStretch(1)
        form = QFormLayout()
        form.addRow("Variable", self.name_box)
        form.addRow("Key", self.key_edit)
        form.addRow(buttons_row)

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setObjectName("providerSettingsMessage")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(close)
        self.resize(620, 420)

        self.problem = keyring_problem()
        self.refresh()

    def names(self) -> list[str]:
        """The known variable names plus any typed ones, in table order."""
        extra = [self.name_box.itemText(i) for i in range(self.name_box.count())]
        return list(dict.fromkeys([*KNOWN_KEY_NAMES, *extra]))

    def status_of(self, name: str) -> str:
        """The Key column's text for ``name`` ('' when not listed)."""
        for row in range(self.table.rowCount()):
            cell = self.table.item(row, 0)
            if cell is not None and cell.text() == name:
                status = self.table.item(row, 1)
                return status.text() if status is not None else ""
        return ""

    def refresh(self) -> None:
        """Re-reads every listed key's status (not its value) from the keyring."""
        usable = self.problem is None
        for widget in (self.key_edit, self.save_button, self.remove_button, self.name_box):
            widget.setEnabled(usable)
        names = self.names()
        self.table.setRowCount(len(names))
        for row, name in enumerate(names):
            if usable:
                try:
                    text = status_text(key_status(name))
                except KeyringUnavailable as exc:
                    text, self.problem = "unknown", str(exc)
            else:
                in_env = bool(os.environ.get(name))
                text = status_text(KeyStatus(name, in_keyring=False, in_environment=in_env))
            self.table.setItem(row, 0, QTableWidgetItem(name))
            self.table.setItem(row, 1, QTableWidgetItem(text))
        if self.problem is not None:
            self._say(self.problem, error=True)

    def save_key(self) -> None:
        name = self.name_box.currentText().strip()
        value = self.key_edit.text().strip()
        if not valid_key_name(name):
            self._say(f"{name!r} is not an environment variable name", error=True)
            return
        if not value:
            self._say(f"paste the key for {name} first", error=True)
            return
        try:
            store_key(name, value)
        except KeyringUnavailable as exc:
            self._say(str(exc), error=True)
            return
        finally:
            self.key_edit.clear()  # the value leaves the widget whatever happened
        if self.name_box.findText(name) < 0:
            self.name_box.addItem(name)
        self.refresh()
        self._say(f"{name}: stored in the keyring")

    def remove_selected_key(self) -> None:
        name = self.name_box.currentText().strip()
        if not valid_key_name(name):
            self._say(f"{name!r} is not an environment variable name", error=True)
            return
        try:
            removed = remove_key(name)
        except KeyringUnavailable as exc:
            self._say(str(exc), error=True)
            return
        self.refresh()
        self._say(f"{name}: removed from the keyring" if removed else f"{name}: nothing stored")

    def _row_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            cell = self.table.item(rows[0].row(), 0)
            if cell is not None:
                self.name_box.setCurrentText(cell.text())

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setProperty("error", error)


def open_provider_settings(parent: QWidget) -> QWidget:
    """File › Provider settings…: the dialog, window-modal, deleted when closed."""
    dialog = ProviderSettingsDialog(parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
