"""Policy presets: named policies saved as TOML in the presets folder, the built-ins shipped in
resources, bad files and bad names refused in one line, a chosen preset applied to the policy
form as edits that the next run records as overrides."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from PySide6.QtWidgets import QComboBox, QMessageBox
from pytestqt.qtbot import QtBot

from inspector.app.policy.policy_panel import PolicyPanel
from inspector.app.shell.main_window import MainWindow
from inspector.core.policy import Policy
from inspector.core.records import RunRecord
from inspector.editing.policy_presets import (
    ENV_VAR,
    PresetError,
    all_presets,
    built_in_presets,
    presets_dir,
    read_preset,
    save_preset,
)
from inspector.resources import resolve_scenario

BUILT_INS = {
    "accumulate + keep failed": {"feedback_history": "accumulate", "keep_failed_attempts": True},
    "latest only": {"feedback_history": "latest"},
    "tool-role feedback": {"feedback_role": "tool"},
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "presets"))
    return tmp_path / "presets"


@pytest.fixture
def panel(qtbot: QtBot, folder: Path) -> PolicyPanel:
    widget = PolicyPanel()
    qtbot.addWidget(widget)
    widget.set_scenario(resolve_scenario("demo:retry-feedback"))
    return widget


def combo_texts(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def answer(question: QMessageBox | None, button: QMessageBox.StandardButton) -> None:
    assert question is not None and question.isVisible()
    clicked = question.button(button)
    assert clicked is not None
    clicked.click()


def test_the_folder_is_the_env_var_else_the_user_config_dir(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert presets_dir() == folder
    monkeypatch.delenv(ENV_VAR)
    assert presets_dir().parts[-2:] == ("agent-inspector", "presets")


def test_the_built_ins_ship_in_resources(folder: Path) -> None:
    built_in = built_in_presets()
    assert {p.name: read_preset(p) for p in built_in} == BUILT_INS
    assert all(p.built_in and p.path.parent.name == "presets" for p in built_in)
    assert [p.name for p in all_presets()] == sorted(BUILT_INS)  # no user preset yet


def test_save_load_delete_round_trip(panel: PolicyPanel, folder: Path, qtbot: QtBot) -> None:
    bar = panel.policy_presets
    panel.policy_form.set_values({"max_attempts": 5, "feedback_role": "tool"})
    wanted = panel.policy_form.values()
    assert bar.save("strict")
    path = folder / "strict.toml"
    saved = tomllib.loads(path.read_text(encoding="utf-8"))["policy"]
    assert saved == {k: v for k, v in wanted.items() if v is not None}  # every field with a value
    assert Policy.model_validate(saved).max_attempts == 5
    assert bar.combo.currentText() == "strict" and bar.delete_button.isEnabled()

    panel.reset()  # back to the scenario's values: no preset of the user's matches
    assert panel.overrides() == []
    assert bar.apply("strict")
    assert panel.policy_form.values() == wanted
    assert panel.overrides() == ["policy.max_attempts=5", 'policy.feedback_role="tool"']

    bar.ask_delete()
    answer(bar.question, QMessageBox.StandardButton.Yes)
    assert not path.exists()
    assert "strict" not in combo_texts(bar.combo)


def test_the_save_dialog_names_the_preset_and_overwriting_asks(
    panel: PolicyPanel, folder: Path
) -> None:
    bar = panel.policy_presets
    panel.policy_form.set_values({"max_attempts": 2})
    bar.ask_name()
    assert bar.dialog is not None
    bar.dialog.setTextValue("  two tries ")
    bar.dialog.accept()
    path = folder / "two tries.toml"
    preset = bar.preset_named("two tries")
    assert preset is not None and preset.path == path
    assert read_preset(preset) == {
        k: v for k, v in panel.policy_form.values().items() if v is not None
    }

    panel.policy_form.set_values({"max_attempts": 4})
    assert not bar.save("two tries")  # exists: asks first
    answer(bar.question, QMessageBox.StandardButton.No)
    assert tomllib.loads(path.read_text(encoding="utf-8"))["policy"]["max_attempts"] == 2
    assert not bar.save("two tries")
    answer(bar.question, QMessageBox.StandardButton.Yes)
    assert tomllib.loads(path.read_text(encoding="utf-8"))["policy"]["max_attempts"] == 4


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a/b", "preset name 'a/b': no / or \\ (it is a file name)"),
        ("..\\up", "preset name '..\\\\up': no / or \\ (it is a file name)"),
        (".hidden", "preset name '.hidden': no leading dot or control characters"),
        ("  ", "a preset needs a name"),
        ("Latest Only", "'Latest Only' is a built-in preset: choose another name"),
    ],
)
def test_bad_names_are_refused(panel: PolicyPanel, folder: Path, name: str, message: str) -> None:
    bar = panel.policy_presets
    assert not bar.save(name)
    assert bar.error.text() == message and bar.error.isVisibleTo(bar)
    assert not folder.exists() or list(folder.iterdir()) == []
    with pytest.raises(PresetError):
        save_preset(name, Policy().model_dump())


def test_built_ins_cannot_be_deleted(panel: PolicyPanel) -> None:
    bar = panel.policy_presets
    assert bar.apply("latest only")
    assert bar.combo.currentText() == "latest only (built-in)"
    assert not bar.delete_button.isEnabled()
    assert not bar.delete("latest only")
    assert bar.error.text() == "no preset of yours is called 'latest only'"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("[policy]\nmax_attempts = 0\n", "policy.max_attempts: Input should be greater than or"),
        ("[policy]\nfeedback_role = 'robot'\n", "policy.feedback_role: Input should be"),
        ("[policy]\nmax_atempts = 2\n", "policy.max_atempts: not a policy field"),
        ("[model]\nname = 'x'\n", "no [policy] table"),
        ("[policy]\nmax_steps = 4\n[model]\ntemperature = 0.0\n", "model: not part of a"),
        ("[policy\n", "not valid TOML: "),
    ],
)
def test_an_invalid_preset_file_is_one_line_naming_file_and_field(
    panel: PolicyPanel, folder: Path, body: str, problem: str
) -> None:
    folder.mkdir()
    path = folder / "broken.toml"
    path.write_text(body, encoding="utf-8")
    bar = panel.policy_presets
    bar.refresh()
    before = panel.policy_form.values()
    index = combo_texts(bar.combo).index("broken")
    bar.combo.setCurrentIndex(index)
    bar.combo.activated.emit(index)  # as a user's choice
    message = bar.error.text()
    assert message.startswith(f"{path}: {problem}") and "\n" not in message
    assert bar.error.isVisibleTo(bar)
    assert panel.policy_form.values() == before  # nothing applied
    assert bar.combo.currentText() != "broken"  # the drop-down shows what the form holds


def test_a_chosen_preset_is_the_next_runs_overrides(window: MainWindow, qtbot: QtBot) -> None:
    assert window.library.select_scenario("demo:retry-feedback")
    bar = window.policy.policy_presets
    index = combo_texts(bar.combo).index("latest only (built-in)")
    bar.combo.activated.emit(index)
    assert window.policy.overrides() == ['policy.feedback_history="latest"']
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.run_turn()
    record: RunRecord = finished.args[0]
    assert record.overrides == ['policy.feedback_history="latest"']
    assert record.policy.feedback_history == "latest"
    qtbot.waitUntil(lambda: not window.runner.busy)


def test_a_preset_written_by_hand_shows_when_the_list_opens(
    panel: PolicyPanel, folder: Path
) -> None:
    folder.mkdir()
    (folder / "short.toml").write_text("[policy]\nmax_steps = 4\n", encoding="utf-8")
    bar = panel.policy_presets
    assert "short" not in combo_texts(bar.combo)
    bar.combo.aboutToShowPopup.emit()  # what opening the list does (no popups offscreen)
    assert combo_texts(bar.combo)[-1] == "short"
    assert bar.apply("short")
    assert panel.overrides() == ["policy.max_steps=4"]  # the other fields keep their values


def test_a_preset_is_checked_field_by_field_like_typed_values(qtbot: QtBot, folder: Path) -> None:
    """A preset naming only ``on_step_cap = "fallback"`` needs the form's fallback, not one of
    its own: the rule across fields is the form's to check, as for a typed value."""
    widget = PolicyPanel()
    qtbot.addWidget(widget)
    widget.set_scenario(resolve_scenario("demo:invalid-output-fallback"))  # has a fallback
    folder.mkdir()
    (folder / "cap.toml").write_text('[policy]\non_step_cap = "fallback"\n', encoding="utf-8")
    bar = widget.policy_presets
    bar.refresh()
    assert bar.apply("cap"), bar.error.text()
    assert widget.overrides() == ['policy.on_step_cap="fallback"'] and widget.errors() == {}
    assert bar.combo.currentText() == "cap"

    # Without a fallback in the form, the form says what is missing, under its field.
    widget.set_scenario(resolve_scenario("demo:retry-feedback"))
    assert bar.apply("cap")
    assert "fallback" in widget.errors()["policy.fallback"]


def test_the_drop_down_shows_the_preset_that_gives_the_form(panel: PolicyPanel) -> None:
    """The scenario's own policy already has what "accumulate + keep failed" sets: with another
    field edited, that preset is not what the form holds any more."""
    bar = panel.policy_presets
    assert bar.combo.currentText() == "accumulate + keep failed (built-in)"  # no edits yet
    panel.policy_form.set_values({"feedback_role": "tool"})
    assert bar.combo.currentText() == "tool-role feedback (built-in)"
    panel.policy_form.set_values({"max_attempts": 5})  # no preset gives this form
    assert bar.combo.currentIndex() == -1 and not bar.delete_button.isEnabled()
