"""The policy panel's preset row: a drop-down of named policies (``policy_presets``), "Save as
preset…" and "Delete".

Choosing a preset puts its values in the policy form as edits (validated like typed ones, and
diffed against the scenario into the next run's overrides). The drop-down shows the preset the
form holds, if any: the one that, applied to the scenario's own policy, gives the form.
Dialogs are opened with ``open()``, never ``exec()``: the asyncio loop keeps running while they
are up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QInputDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.app.widgets.flow_layout import flow_row
from inspector.editing.policy_presets import (
    PolicyPreset,
    PresetError,
    all_presets,
    delete_preset,
    read_preset,
    save_preset,
    user_preset_path,
)

if TYPE_CHECKING:
    from inspector.app.policy.model_form import ModelForm


class _PresetBox(QComboBox):
    aboutToShowPopup = Signal()

    def showPopup(self) -> None:
        self.aboutToShowPopup.emit()  # lists the folder again: presets added by hand show up
        super().showPopup()


class PolicyPresetBar(QWidget):
    """Presets for ``form`` (the panel's policy ``ModelForm``)."""

    def __init__(self, form: ModelForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = form
        self.presets: list[PolicyPreset] = []
        self._values: dict[str, dict[str, Any] | None] = {}  # path → values (None: unreadable)
        # The last dialogs opened (tests answer them).
        self.dialog: QInputDialog | None = None
        self.question: QMessageBox | None = None
        self.combo = _PresetBox(self)
        self.combo.setObjectName("policyPresets")
        self.combo.setPlaceholderText("Choose a preset")  # shown when the form matches none
        # Long preset names must not widen the dock (the timeline needs the room).
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(8)
        self.combo.setToolTip("Put a saved policy in the form (as edits of the next run)")
        self.combo.activated.connect(self._chosen)
        self.combo.aboutToShowPopup.connect(self.refresh)
        self.save_button = QPushButton("Save as preset…", self)
        self.save_button.setToolTip("Save the policy in the form as a named preset")
        self.save_button.clicked.connect(self.ask_name)
        self.delete_button = QPushButton("Delete", self)
        self.delete_button.setToolTip("Delete the chosen preset (your own presets only)")
        self.delete_button.clicked.connect(self.ask_delete)
        self.error = QLabel(self)
        self.error.setObjectName("presetError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d1242f;")
        self.error.hide()
        # Wrapped onto a second line in a narrow dock rather than widening it.
        label = QLabel("Policy preset:", self)
        row = flow_row(self, label, self.combo, self.save_button, self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(row)
        layout.addWidget(self.error)
        form.changed.connect(self._sync)
        self.refresh()

    # ---- intents ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Lists the presets again (the folder may have changed on disk)."""
        try:
            self.presets = all_presets()
        except PresetError as exc:
            self.presets = [p for p in self.presets if p.built_in]
            self.show_error(str(exc))
        self._values = {}
        blocked = self.combo.blockSignals(True)
        try:
            self.combo.clear()
            for preset in self.presets:
                self.combo.addItem(f"{preset.name} (built-in)" if preset.built_in else preset.name)
        finally:
            self.combo.blockSignals(blocked)
        self._sync()

    def apply(self, name: str) -> bool:
        """Puts preset ``name``'s values in the form; False (and the error shown) on failure."""
        preset = self.preset_named(name)
        if preset is None:
            self.show_error(f"no preset {name!r}")
            return False
        return self._apply(preset)

    def _apply(self, preset: PolicyPreset) -> bool:
        try:
            values = read_preset(preset)
        except PresetError as exc:
            self.show_error(str(exc))
            self._sync()
            return False
        self.show_error("")
        self.form.set_values(values)
        return True

    def save(self, name: str, *, overwrite: bool = False) -> bool:
        """Saves the form's policy as user preset ``name``. An existing one is overwritten only
        with ``overwrite`` (else the user is asked first, and it is saved if they agree)."""
        try:
            path = user_preset_path(name)
        except PresetError as exc:
            self.show_error(str(exc))
            return False
        if path.exists() and not overwrite:
            self._ask(
                f"A preset called “{path.stem}” exists. Replace it?",
                lambda: self.save(name, overwrite=True),
            )
            return False
        errors = self.form.errors()
        if errors:
            lines = "; ".join(f"policy.{k}: {m}" if k else m for k, m in errors.items())
            self.show_error(f"Not saved: the policy has invalid values: {lines}")
            return False
        try:
            saved = save_preset(name, self.form.values())
        except PresetError as exc:
            self.show_error(str(exc))
            return False
        self.show_error("")
        self.refresh()
        self.combo.setCurrentIndex(self._index_of(saved.name, built_in=False))
        return True

    def delete(self, name: str) -> bool:
        preset = self.preset_named(name, built_in=False)
        if preset is None:
            self.show_error(f"no preset of yours is called {name!r}")
            return False
        try:
            delete_preset(preset)
        except PresetError as exc:
            self.show_error(str(exc))
            return False
        self.show_error("")
        self.refresh()
        return True

    def ask_name(self) -> None:
        """The "Save as preset…" dialog (the name of the preset the form matches, to start)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Save policy preset")
        dialog.setLabelText("Preset name:")
        current = self.current()
        dialog.setTextValue(current.name if current and not current.built_in else "")
        dialog.textValueSelected.connect(lambda name: self.save(name))
        self.dialog = dialog
        dialog.open()

    def ask_delete(self) -> None:
        preset = self.current()
        if preset is None or preset.built_in:
            return
        self._ask(f"Delete the preset “{preset.name}”?", lambda: self.delete(preset.name))

    # ---- state -----------------------------------------------------------------------------

    def preset_named(self, name: str, built_in: bool | None = None) -> PolicyPreset | None:
        """The preset called ``name`` (a user's preset wins over a built-in of that name)."""
        for preset in reversed(self.presets):
            if preset.name == name and built_in in (None, preset.built_in):
                return preset
        return None

    def current(self) -> PolicyPreset | None:
        index = self.combo.currentIndex()
        return self.presets[index] if 0 <= index < len(self.presets) else None

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))

    def _index_of(self, name: str, built_in: bool) -> int:
        for index, preset in enumerate(self.presets):
            if preset.name == name and preset.built_in == built_in:
                return index
        return -1

    def _chosen(self, index: int) -> None:
        if 0 <= index < len(self.presets):
            self._apply(self.presets[index])

    def _ask(self, text: str, then: Callable[[], object]) -> None:
        question = QMessageBox(
            QMessageBox.Icon.Question,
            "Policy presets",
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        yes = QMessageBox.StandardButton.Yes
        question.buttonClicked.connect(
            lambda button: then() if question.standardButton(button) == yes else None
        )
        self.question = question
        question.open()

    def _matches(self, preset: PolicyPreset, values: dict[str, Any]) -> bool:
        key = str(preset.path)
        if key not in self._values:
            try:
                self._values[key] = read_preset(preset)
            except PresetError:
                self._values[key] = None  # said when chosen, not on every edit
        wanted = self._values[key]
        # The preset applied to the scenario's policy gives the form: a preset naming two
        # fields does not "match" a form with a third one edited.
        return wanted is not None and {**self.form.base, **wanted} == values

    def _sync(self) -> None:
        """Shows the preset that, applied to the scenario's policy, gives the form (the user's
        first, then the most specific)."""
        values = self.form.values()
        candidates = [
            (not p.built_in, len(self._values.get(str(p.path)) or {}), i)
            for i, p in enumerate(self.presets)
            if self._matches(p, values)
        ]
        self.combo.setCurrentIndex(max(candidates)[2] if candidates else -1)
        current = self.current()
        self.delete_button.setEnabled(current is not None and not current.built_in)
