"""The small dialog the Proxy menu's Start opens: the port and the two upstreams."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from inspector.app.proxy.proxy_settings import ProxySettings, check_settings

__all__ = ["ProxyDialog", "ask_settings"]


class ProxyDialog(QDialog):
    def __init__(self, settings: ProxySettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Start the recording proxy")
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setValue(settings.port)
        self.upstream = QLineEdit(settings.upstream)
        self.upstream_anthropic = QLineEdit(settings.upstream_anthropic)
        self.problem = QLabel()
        self.problem.setObjectName("proxyProblem")
        self.problem.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Port on 127.0.0.1", self.port)
        form.addRow("OpenAI-compatible upstream", self.upstream)
        form.addRow("Anthropic upstream", self.upstream_anthropic)
        form.addRow(QLabel("Keys are read from the environment, as the proxy command does."))
        form.addRow(self.problem)
        form.addRow(buttons)

    def settings(self) -> ProxySettings:
        return ProxySettings(
            port=self.port.value(),
            upstream=self.upstream.text().strip(),
            upstream_anthropic=self.upstream_anthropic.text().strip(),
        )

    def accept(self) -> None:
        problem = check_settings(self.settings())
        if problem is not None:
            self.problem.setText(problem)
            self.problem.show()
            return
        super().accept()


def ask_settings(parent: QWidget | None, settings: ProxySettings) -> ProxySettings | None:
    """The settings the user confirmed, or None (cancelled)."""
    dialog = ProxyDialog(settings, parent)
    try:
        return dialog.settings() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()
