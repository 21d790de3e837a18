"""The About dialog, the first-run welcome panel and the provider settings (keyring) dialog.

Keys only ever go to an in-memory keyring installed with ``keyring.set_keyring``; the real
backend is never discovered or touched.
"""

from __future__ import annotations

import tomllib
from email.message import Message
from importlib import metadata
from pathlib import Path

import keyring
import keyring.core
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import KeyringLocked, PasswordDeleteError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTableWidget, QWidget
from pytestqt.qtbot import QtBot

import inspector
from inspector.app.shell import about, provider_settings, welcome
from inspector.app.shell.about import AboutDialog, show_about
from inspector.app.shell.provider_settings import (
    KNOWN_KEY_NAMES,
    NO_BACKEND_MESSAGE,
    KeyringUnavailable,
    ProviderSettingsDialog,
)
from inspector.app.shell.welcome import WelcomePanel
from inspector.core.scenario import ModelConfig
from inspector.providers.http import KEYRING_SERVICE, resolve_api_key
from inspector.resources import demo_names
from inspector.store import Store

SECRET = "sk-test-do-not-show-0123456789"


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.secrets:
            raise PasswordDeleteError("not found")
        del self.secrets[(service, username)]


class LockedKeyring(MemoryKeyring):
    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("the collection is locked")


@pytest.fixture
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> MemoryKeyring:
    # monkeypatch restores whatever backend (or none yet) the process had afterwards.
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    for name in KNOWN_KEY_NAMES:
        monkeypatch.delenv(name, raising=False)
    fake = MemoryKeyring()
    keyring.set_keyring(fake)
    return fake


def _visible_texts(widget: QWidget) -> list[str]:
    texts = [label.text() for label in widget.findChildren(QLabel)]
    for table in widget.findChildren(QTableWidget):
        for row in range(table.rowCount()):
            for column in range(table.columnCount()):
                item = table.item(row, column)
                texts.append(item.text() if item is not None else "")
    return texts


# --- About ---------------------------------------------------------------------------------


def _metadata(**fields: str | list[str]) -> metadata.PackageMetadata:
    message = Message()
    for key, value in fields.items():
        for one in value if isinstance(value, list) else [value]:
            message[key.replace("_", "-")] = one
    return message  # type: ignore[return-value]


def test_licence_prefers_the_spdx_expression_then_a_short_field_then_classifiers() -> None:
    osi = "License :: OSI Approved :: BSD License"
    assert about.licence_of(_metadata(License_Expression="MIT", License="x")) == "MIT"
    assert about.licence_of(_metadata(License="BSD-3-Clause", Classifier=osi)) == "BSD-3-Clause"
    whole_text = "Copyright (c) someone\nPermission is hereby granted..."
    assert about.licence_of(_metadata(License=whole_text, Classifier=osi)) == "BSD License"
    assert about.licence_of(_metadata(Name="x")) == about.UNKNOWN_LICENCE


def test_runtime_distributions_walks_requirements_without_extras_or_missing_ones() -> None:
    graph = {
        "app": ["b>=1", "c_d==2; python_version >= '3'", "pytest==9; extra == 'dev'", "gone"],
        "b": ["c.d", "app"],  # a cycle, and another spelling of c-d
        "c-d": [],
    }

    def requires(name: str) -> list[str]:
        if name not in graph:
            raise metadata.PackageNotFoundError(name)
        return graph[name]

    assert about.runtime_distributions("app", requires) == ["app", "b", "c-d"]
    assert about.requirement_name("pytest==9; extra == 'dev'") is None
    assert about.requirement_name("Jaraco.Classes>=3 ; sys_platform == 'linux'") == (
        "Jaraco.Classes"
    )


def test_bundled_components_are_the_installed_runtime_ones_with_their_licences() -> None:
    components = {about.normalized(c.name): c for c in about.bundled_components()}
    assert components["agent-inspector"].version == inspector.__version__
    assert components["agent-inspector"].licence == "MIT"
    assert components["pydantic"].licence == "MIT"
    assert components["httpx"].licence == "BSD-3-Clause"
    assert components["pyside6-essentials"].licence.startswith("LGPL-3.0")
    assert components["qt"].licence == "LGPL-3.0-only"
    assert components["keyring"].version == metadata.version("keyring")
    # Transitive dependencies are there; development tools are not.
    assert {"httpcore", "pydantic-core", "shiboken6"} <= set(components)
    assert not {"pytest", "mypy", "hypothesis", "ruff"} & set(components)


def test_about_dialog_shows_the_version_and_licences(qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    dialog = show_about(parent)
    qtbot.waitExposed(dialog)
    assert dialog.isVisible() and dialog.isModal()
    assert f"Agent Inspector {inspector.__version__}" in dialog.text.text()
    assert dialog.licence_of("httpx") == "BSD-3-Clause"
    assert dialog.licence_of("Qt") == "LGPL-3.0-only"
    assert dialog.licence_of("no-such-thing") is None
    assert dialog.table.rowCount() == len(dialog.components)
    dialog.reject()
    assert not dialog.isVisible()


def test_about_dialog_standalone(qtbot: QtBot) -> None:
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "About Agent Inspector"
    assert dialog.table.item(0, 0).text() == "agent-inspector"


# --- Welcome -------------------------------------------------------------------------------


def test_first_run_is_when_there_is_no_store_file_yet(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    assert welcome.is_first_run(path)
    Store.open(path).close()
    assert not welcome.is_first_run(path)


def test_demos_lists_every_demo_with_retry_feedback_first() -> None:
    demos = welcome.demos()
    assert demos[0].ref == "demo:retry-feedback"
    assert sorted(d.ref for d in demos) == [f"demo:{n}" for n in demo_names()]
    assert all(d.description for d in demos)


@pytest.mark.parametrize("example", welcome.PROVIDER_EXAMPLES, ids=lambda e: e.server)
def test_each_provider_example_is_a_valid_model_section(example: welcome.ProviderExample) -> None:
    section = tomllib.loads(welcome.model_section(example, "some-model"))["model"]
    model = ModelConfig.model_validate(section)
    assert model.provider == example.provider
    assert (model.base_url or "") == example.base_url
    assert (model.api_key_env or "") == example.api_key_env


def test_welcome_panel_tells_how_to_reach_each_provider(qtbot: QtBot) -> None:
    panel = WelcomePanel()
    qtbot.addWidget(panel)
    text = panel.providers.text()
    for needed in (
        "http://127.0.0.1:11434/v1",  # Ollama
        "http://127.0.0.1:8080/v1",  # llama.cpp
        "http://127.0.0.1:8000/v1",  # vLLM
        "https://api.openai.com/v1",
        "https://api.anthropic.com/v1",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ):
        assert needed in text


def test_welcome_panel_buttons_emit_their_signals(qtbot: QtBot) -> None:
    panel = WelcomePanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    assert set(panel.demo_buttons) == {f"demo:{n}" for n in demo_names()}
    with qtbot.waitSignal(panel.demoRequested) as requested:
        qtbot.mouseClick(panel.demo_buttons["demo:step-cap"], Qt.MouseButton.LeftButton)
    assert requested.args == ["demo:step-cap"]
    with qtbot.waitSignal(panel.settingsRequested):
        qtbot.mouseClick(panel.settings_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(panel.dismissed):
        qtbot.mouseClick(panel.dismiss_button, Qt.MouseButton.LeftButton)


# --- Provider settings ---------------------------------------------------------------------


def _settings(qtbot: QtBot) -> ProviderSettingsDialog:
    dialog = ProviderSettingsDialog()
    qtbot.addWidget(dialog)
    return dialog


def test_a_stored_key_lands_where_the_providers_read_it_and_is_never_shown(
    qtbot: QtBot, memory_keyring: MemoryKeyring
) -> None:
    dialog = _settings(qtbot)
    assert dialog.status_of("OPENAI_API_KEY") == "not set"
    dialog.name_box.setCurrentText("OPENAI_API_KEY")
    dialog.key_edit.setText(SECRET)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)

    assert memory_keyring.secrets == {(KEYRING_SERVICE, "OPENAI_API_KEY"): SECRET}
    assert resolve_api_key("OPENAI_API_KEY", environ={}) == SECRET
    assert dialog.key_edit.text() == ""
    assert dialog.status_of("OPENAI_API_KEY") == "stored in the keyring"
    assert dialog.status_of("ANTHROPIC_API_KEY") == "not set"
    assert not [t for t in _visible_texts(dialog) if SECRET in t]


def test_reopened_dialog_shows_the_state_and_the_environment_winning(
    qtbot: QtBot, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_keyring.secrets[(KEYRING_SERVICE, "ANTHROPIC_API_KEY")] = SECRET
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    monkeypatch.setenv("GROQ_API_KEY", "from-env")
    dialog = _settings(qtbot)
    assert "the environment variable is set too and wins" in dialog.status_of("ANTHROPIC_API_KEY")
    assert dialog.status_of("GROQ_API_KEY") == "set in the environment (not stored)"
    assert not [t for t in _visible_texts(dialog) if SECRET in t or "from-env" in t]


def test_remove_deletes_the_key_and_says_when_there_was_none(
    qtbot: QtBot, memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.secrets[(KEYRING_SERVICE, "GROQ_API_KEY")] = SECRET
    dialog = _settings(qtbot)
    row = [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())].index(
        "GROQ_API_KEY"
    )
    dialog.table.selectRow(row)  # selecting a row picks its variable
    assert dialog.name_box.currentText() == "GROQ_API_KEY"
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert memory_keyring.secrets == {}
    assert dialog.status_of("GROQ_API_KEY") == "not set"
    assert dialog.message.text() == "GROQ_API_KEY: removed from the keyring"
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "GROQ_API_KEY: nothing stored"


def test_a_custom_variable_is_stored_and_listed(
    qtbot: QtBot, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    dialog = _settings(qtbot)
    dialog.name_box.setCurrentText("VLLM_API_KEY")
    dialog.key_edit.setText(SECRET)
    dialog.save_key()
    assert memory_keyring.secrets == {(KEYRING_SERVICE, "VLLM_API_KEY"): SECRET}
    assert dialog.status_of("VLLM_API_KEY") == "stored in the keyring"


@pytest.mark.parametrize(("name", "key"), [("1BAD-NAME", SECRET), ("OPENAI_API_KEY", "  ")])
def test_bad_input_is_refused_with_a_message(
    qtbot: QtBot, memory_keyring: MemoryKeyring, name: str, key: str
) -> None:
    dialog = _settings(qtbot)
    dialog.name_box.setCurrentText(name)
    dialog.key_edit.setText(key)
    dialog.save_key()
    assert memory_keyring.secrets == {}
    assert dialog.message.property("error") is True
    assert name in dialog.message.text()


def test_no_keyring_backend_is_said_plainly_and_nothing_can_be_stored(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    keyring.set_keyring(fail.Keyring())
    dialog = _settings(qtbot)
    assert dialog.message.text() == NO_BACKEND_MESSAGE
    assert not dialog.save_button.isEnabled() and not dialog.key_edit.isEnabled()
    assert dialog.status_of("OPENAI_API_KEY") in ("not set", "set in the environment (not stored)")
    with pytest.raises(KeyringUnavailable, match="No OS keyring"):
        provider_settings.store_key("OPENAI_API_KEY", SECRET)


def test_a_locked_keyring_is_a_message_not_a_crash(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keyring.set_keyring(LockedKeyring())
    dialog = _settings(qtbot)
    dialog.name_box.setCurrentText("OPENAI_API_KEY")
    dialog.key_edit.setText(SECRET)
    dialog.save_key()
    assert dialog.message.text().startswith("the keyring refused to store OPENAI_API_KEY")
    assert dialog.key_edit.text() == ""
    assert dialog.status_of("OPENAI_API_KEY") == "not set"


def test_a_demo_that_needs_a_model_server_says_so(qtbot: QtBot) -> None:
    panel = WelcomePanel()
    qtbot.addWidget(panel)
    for demo in welcome.demos():
        note = "needs a running model server" in panel.demo_buttons[demo.ref].description()
        assert note is not demo.offline
    assert next(d for d in welcome.demos() if d.ref == "demo:retry-feedback").offline
