"""The policy form: generated from the pydantic models, refuses invalid values inline, and
turns edits into the --set overrides the next run uses."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
)
from pytestqt.qtbot import QtBot

from inspector.app.policy.policy_panel import ModelForm, PolicyPanel
from inspector.core.policy import Policy
from inspector.core.scenario import ModelConfig, parse_override
from inspector.editing.form_fields import (
    field_errors,
    field_specs,
    overrides,
    parse_value_text,
    toml_literal,
)
from inspector.resources import resolve_scenario


@pytest.fixture
def panel(qtbot: QtBot) -> PolicyPanel:
    widget = PolicyPanel()
    qtbot.addWidget(widget)
    widget.set_scenario(resolve_scenario("demo:retry-feedback"))
    return widget


def test_every_policy_field_has_the_editor_its_type_calls_for(panel: PolicyPanel) -> None:
    editors = panel.policy_form.editors
    assert set(editors) == set(Policy.model_fields)
    assert isinstance(editors["feedback_history"].editor, QComboBox)
    combo = editors["on_empty_final"].editor
    assert isinstance(combo, QComboBox)
    assert [combo.itemText(i) for i in range(combo.count())] == ["finalize", "retry", "error"]
    assert isinstance(editors["max_attempts"].editor, QSpinBox)
    assert isinstance(editors["validator_timeout_s"].editor, QDoubleSpinBox)
    assert isinstance(editors["keep_failed_attempts"].editor, QCheckBox)
    assert isinstance(editors["final_step_instruction"].editor, QPlainTextEdit)
    assert isinstance(editors["feedback_builder"].editor, QLineEdit)
    assert isinstance(editors["fallback"].editor, QLineEdit)
    model = panel.model_form.editors
    assert isinstance(model["provider"].editor, QComboBox)
    assert "headers" not in model  # may carry credentials: edited in the file only


def test_a_new_field_appears_by_itself(qtbot: QtBot) -> None:
    class Extended(BaseModel):
        retries: int = Field(2, ge=0)
        mode: Literal["fast", "slow"] = "fast"
        verbose: bool = False

    form = ModelForm("X", "x", Extended)
    qtbot.addWidget(form)
    assert list(form.editors) == ["retries", "mode", "verbose"]
    assert isinstance(form.editors["mode"].editor, QComboBox)
    spin = form.editors["retries"].editor
    assert isinstance(spin, QSpinBox) and spin.minimum() == 0


def test_the_form_starts_from_the_scenario_and_has_no_overrides(panel: PolicyPanel) -> None:
    editors = panel.policy_form.editors
    assert editors["max_attempts"].value() == 3
    assert editors["max_steps"].value() == 8  # the demo's own, not Policy's default of 20
    assert panel.overrides() == [] and panel.errors() == {}


def test_edits_become_overrides_that_load_back_to_the_same_values(panel: PolicyPanel) -> None:
    editors = panel.policy_form.editors
    editors["max_attempts"].editor.setValue(5)
    editors["feedback_role"].editor.setCurrentText("tool")
    editors["keep_failed_attempts"].editor.setChecked(False)
    editors["final_step_instruction"].editor.setPlainText('Say "done" now.\nNo tools.')
    editors["fallback"].editor.setText('{ body = "Meeting at 3pm." }')
    panel.model_form.editors["temperature"].editor.setText("0.5")
    sets = panel.overrides()
    assert sets[0] == "policy.max_attempts=5"
    assert "model.temperature=0.5" in sets
    scenario = resolve_scenario("demo:retry-feedback", sets)
    assert scenario.policy.max_attempts == 5
    assert scenario.policy.feedback_role == "tool"
    assert scenario.policy.keep_failed_attempts is False
    assert scenario.policy.final_step_instruction == 'Say "done" now.\nNo tools.'
    assert scenario.policy.fallback == {"body": "Meeting at 3pm."}
    assert scenario.model.temperature == 0.5
    assert panel.policy_form.labels["max_attempts"].font().bold()
    assert not panel.policy_form.labels["max_steps"].font().bold()
    panel.reset()
    assert panel.overrides() == []


def test_invalid_values_are_refused_inline(panel: PolicyPanel) -> None:
    editors = panel.policy_form.editors
    editors["on_invalid_output"].editor.setCurrentText("fallback")
    fallback = editors["fallback"]
    assert not fallback.error.isHidden()
    assert "neither fallback nor fallback_function" in fallback.error.text()
    assert "policy.fallback" in panel.errors()
    fallback.editor.setText('"Meeting moved."')
    assert fallback.error.isHidden() and panel.errors() == {}

    timeout = editors["validator_timeout_s"]
    timeout.editor.setValue(0)  # gt=0: the spin box allows 0, pydantic refuses it
    assert "greater than 0" in timeout.error.text() and not timeout.error.isHidden()

    max_tokens = panel.model_form.editors["max_tokens"]
    max_tokens.editor.setText("not toml")
    assert "not a TOML value" not in max_tokens.error.text()  # optional: taken as text...
    assert "model.max_tokens" in panel.errors()  # ...which pydantic then refuses
    max_tokens.editor.setText("[not toml")  # meant as an array: the TOML error itself
    assert "not a TOML value" in panel.errors()["model.max_tokens"]


def test_a_value_that_cannot_be_cleared_by_an_override_says_so(qtbot: QtBot) -> None:
    panel = PolicyPanel()
    qtbot.addWidget(panel)
    scenario = resolve_scenario("demo:retry-feedback", ["model.temperature=0.2"])
    panel.set_scenario(scenario)
    panel.model_form.editors["temperature"].editor.setText("")
    assert "cannot be cleared here" in panel.errors()["model.temperature"]


def test_field_specs_and_toml_round_trip() -> None:
    kinds = {s.name: s.kind for s in field_specs(ModelConfig)}
    assert kinds["provider"] == "choice" and kinds["stream"] == "flag"
    assert kinds["temperature"] == "value" and kinds["timeout_s"] == "number"
    for value in ['a "quoted" \\ line\nnext\x7f', 3, 2.5, True, {"a b": [1, "x"]}, []]:
        _, parsed = parse_override(f"policy.x={toml_literal(value)}")
        assert parsed == value
    spec = {s.name: s for s in field_specs(ModelConfig)}["base_url"]
    assert parse_value_text("  http://h:1/v1 ", spec) == "http://h:1/v1"  # text as-is
    assert parse_value_text("", spec) is None


def test_broken_toml_for_an_any_field_is_refused_not_taken_as_text(qtbot: QtBot) -> None:
    spec = {s.name: s for s in field_specs(Policy)}["fallback"]
    assert parse_value_text("plain words", spec) == "plain words"  # as --set takes it
    assert parse_value_text("{ a = 1 }", spec) == {"a": 1}
    for broken in ("{ broken", "[1, 2", '"unclosed'):
        with pytest.raises(ValueError, match="not a TOML value"):
            parse_value_text(broken, spec)
    panel = PolicyPanel()
    qtbot.addWidget(panel)
    panel.set_scenario(resolve_scenario("demo:retry-feedback"))
    panel.policy_form.editors["fallback"].editor.setText("{ broken")
    assert "not a TOML value" in panel.errors()["policy.fallback"]


def test_field_errors_and_overrides_are_pure() -> None:
    base = Policy().model_dump()
    assert field_errors(Policy, base) == {}
    bad = {**base, "max_attempts": 0, "feedback_history": "custom"}
    errors = field_errors(Policy, bad)
    assert "max_attempts" in errors
    assert overrides("policy", base, {**base, "max_steps": 4}) == ["policy.max_steps=4"]


def test_decimal_fields_show_small_values_and_make_no_phantom_override(qtbot: QtBot) -> None:
    panel = PolicyPanel()
    qtbot.addWidget(panel)
    for value in ("0.005", "0.0000004"):  # the second has more decimals than the box shows
        scenario = resolve_scenario("demo:retry-feedback", [f"policy.validator_timeout_s={value}"])
        panel.set_scenario(scenario)
        assert panel.overrides() == []
    timeout = panel.policy_form.editors["validator_timeout_s"].editor
    panel.set_scenario(
        resolve_scenario("demo:retry-feedback", ["policy.validator_timeout_s=0.005"])
    )
    assert timeout.text() == "0.005"
    timeout.setValue(0.25)
    assert panel.overrides() == ["policy.validator_timeout_s=0.25"]
