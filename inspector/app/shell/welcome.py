"""The first-run welcome panel: what the app is, how to run a demo, how to use a real provider.

Public API:
- ``is_first_run(store_path)``: True when the store file does not exist yet. Ask it before
  ``Store.open`` (which creates the file); the window then opens on the demos with this panel.
- ``WelcomePanel(parent)``: a widget with signals ``demoRequested(str)`` (a scenario reference,
  e.g. ``"demo:retry-feedback"``, for ``library.select_scenario`` + ``run_turn``),
  ``settingsRequested()`` (open ``ProviderSettingsDialog``) and ``dismissed()`` (hide me).
"""

from __future__ import annotations

import html
import tomllib
from pathlib import Path
from typing import NamedTuple

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCommandLinkButton,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.resources import DEMO_PREFIX, demo_names, demo_path

FIRST_DEMO = "retry-feedback"


class ProviderExample(NamedTuple):
    """How a scenario's ``[model]`` points at one kind of server (docs/providers.md)."""

    server: str
    provider: str  # model.provider
    base_url: str  # "" = the provider's default
    api_key_env: str  # "" = no key needed


PROVIDER_EXAMPLES = (
    ProviderExample("Ollama", "openai", "http://127.0.0.1:11434/v1", ""),
    ProviderExample("llama.cpp (llama-server)", "openai", "http://127.0.0.1:8080/v1", ""),
    ProviderExample("llama.cpp (local-model start)", "openai", "http://127.0.0.1:8642/v1", ""),
    ProviderExample("vLLM", "openai", "http://127.0.0.1:8000/v1", ""),
    ProviderExample("OpenAI", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    ProviderExample("Anthropic", "anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
)


def is_first_run(store_path: Path) -> bool:
    """The first-run rule: no store file yet (nothing was ever run or recorded)."""
    return not store_path.exists()


class Demo(NamedTuple):
    ref: str  # "demo:NAME"
    description: str
    offline: bool  # scripted model; False = needs a model server (demo:local-model)


def demos() -> list[Demo]:
    """The built-in demos, the recommended first one first."""
    found = []
    for name in demo_names():
        data = tomllib.loads(demo_path(name).read_text(encoding="utf-8"))
        provider = data.get("model", {}).get("provider", "scripted")
        found.append(
            Demo(f"{DEMO_PREFIX}{name}", str(data.get("description", "")), provider == "scripted")
        )
    return sorted(found, key=lambda demo: demo.ref != f"{DEMO_PREFIX}{FIRST_DEMO}")


def model_section(example: ProviderExample, model_name: str = "MODEL") -> str:
    """The scenario ``[model]`` table for ``example`` (TOML)."""
    lines = ["[model]", f'provider = "{example.provider}"', f'name = "{model_name}"']
    if example.base_url:
        lines.append(f'base_url = "{example.base_url}"')
    if example.api_key_env:
        lines.append(f'api_key_env = "{example.api_key_env}"')
    return "\n".join(lines)


def providers_html(examples: tuple[ProviderExample, ...] = PROVIDER_EXAMPLES) -> str:
    """The "use a real model" part of the panel: a table of servers, base URLs and key names."""
    rows = "".join(
        f"<tr><td>{html.escape(e.server)}</td><td><code>{html.escape(e.base_url)}</code></td>"
        f"<td>{f'<code>{html.escape(e.api_key_env)}</code>' if e.api_key_env else 'none'}</td>"
        "</tr>"
        for e in examples
    )
    example = html.escape(model_section(examples[0], "llama3.2"))
    return (
        "<h3>Use a real model</h3>"
        "<p>Copy a demo's scenario file and change its <code>[model]</code> table, e.g. for "
        f"Ollama:</p><pre>{example}</pre>"
        "<table cellspacing='6'><tr><th align='left'>Server</th><th align='left'>base_url</th>"
        f"<th align='left'>API key variable</th></tr>{rows}</table>"
        "<p>Keys are read from the environment variable named by <code>api_key_env</code>, else "
        "from the OS keyring (<b>Provider settings…</b>). They are never written to the run "
        "store, exports or logs. Open the scenario with <b>File › Open scenario…</b> (Ctrl+O) or "
        "<code>agent-inspector path/to/scenario.toml</code>.</p>"
    )


INTRO_HTML = (
    "<h2>Welcome to Agent Inspector</h2>"
    "<p>Run one agent turn and see every step: what the model was sent, what it answered, each "
    "validator's verdict, the feedback injected and the attempts thrown away. Then edit a "
    "validator (Validators tab: every save re-judges the recorded outputs, no model call), "
    "replay the run under another policy (Ctrl+Shift+R) and compare runs side by side "
    "(select two, Ctrl+D).</p>"
    "<h3>Start with a demo</h3>"
    "<p>The demos run offline with a scripted model, unless marked otherwise. Click one to run "
    "it:</p>"
)


class WelcomePanel(QWidget):
    """Shown on first run in place of the (empty) run view."""

    demoRequested = Signal(str)  # a scenario reference: "demo:NAME"
    settingsRequested = Signal()
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePanel")
        content = QWidget()
        layout = QVBoxLayout(content)

        intro = self._label(INTRO_HTML)
        layout.addWidget(intro)

        self.demo_buttons: dict[str, QCommandLinkButton] = {}
        for demo in demos():
            note = "" if demo.offline else " (not offline: needs a running model server)"
            button = QCommandLinkButton(demo.ref, demo.description + note)
            button.clicked.connect(lambda _=False, ref=demo.ref: self.demoRequested.emit(ref))
            self.demo_buttons[demo.ref] = button
            layout.addWidget(button)

        self.providers = self._label(providers_html())
        layout.addWidget(self.providers)

        actions = QHBoxLayout()
        self.settings_button = QPushButton("Provider settings…")
        self.settings_button.clicked.connect(self.settingsRequested)
        self.dismiss_button = QPushButton("Hide this page")
        self.dismiss_button.clicked.connect(self.dismissed)
        actions.addWidget(self.settings_button)
        actions.addStretch(1)
        actions.addWidget(self.dismiss_button)
        layout.addLayout(actions)
        layout.addStretch(1)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    @staticmethod
    def _label(text: str) -> QLabel:
        label = QLabel(text)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setMaximumWidth(820)
        return label
