"""Send to collector…: the OTLP/HTTP endpoint and headers. The endpoint is remembered for the
session; headers (often a key) never leave this dialog except in the request itself."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

__all__ = ["CollectorDialog", "ask_collector"]

DEFAULT_ENDPOINT = "http://127.0.0.1:4318"


class CollectorDialog(QDialog):
    def __init__(self, endpoint: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Send to an OTLP collector")
        self.endpoint = QLineEdit(endpoint or DEFAULT_ENDPOINT)
        self.headers = QPlainTextEdit()
        self.headers.setPlaceholderText("NAME=VALUE, one a line (e.g. Authorization=Bearer …)")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("OTLP/HTTP endpoint", self.endpoint)
        form.addRow("Headers", self.headers)
        form.addRow(QLabel("Headers are sent with the spans only: never stored or logged."))
        form.addRow(buttons)

    def header_lines(self) -> list[str]:
        return [ln.strip() for ln in self.headers.toPlainText().splitlines() if ln.strip()]


def ask_collector(parent: QWidget | None, endpoint: str) -> tuple[str, list[str]] | None:
    """(endpoint, ``NAME=VALUE`` header lines), or None (cancelled)."""
    dialog = CollectorDialog(endpoint, parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.endpoint.text().strip(), dialog.header_lines()
    finally:
        dialog.deleteLater()
