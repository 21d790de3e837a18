"""The "Scenario" dock: the selected scenario's prompt, tools and output schema, edited in place.

Every change is checked as it is typed (JSON fields parse, then the core validates the whole
scenario with the edits: the same one-line error the CLI prints). The next run (Ctrl+R) uses the
edits as ``--set`` overrides, so the run records exactly the scenario it ran; Save (Ctrl+S while
the editor has focus) writes them to the scenario file through ``ScenarioDocument``, keeping its
comments. A built-in demo is saved as a copy. The model and provider are the Policy panel's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.app.scenario.messages_editor import MessagesEditor
from inspector.app.scenario.tools_editor import ToolsEditor
from inspector.app.widgets.form_widgets import error_label, text_box
from inspector.app.widgets.scenario_files import ask_copy_path, save_document, scenario_file
from inspector.core.errors import ScenarioError
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.editing import ScenarioDocument
from inspector.editing.scenario_edits import (
    OUTPUT_SCHEMA,
    ScenarioEdits,
    apply_changes,
    changes,
    json_text,
    overrides,
    parse_schema,
    with_changes,
    write_changes,
)


@dataclass(frozen=True)
class _Draft:
    """The unsaved edits of a scenario while another one is shown."""

    changes: dict[str, Any]  # section -> value, as ``changes()`` gives them
    tools_base: list[dict[str, Any]]  # the file's tools the tools' origins refer to
    origins: list[int | None]


def _group(title: str, *widgets: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    for widget in widgets:
        layout.addWidget(widget)
    return box


class ScenarioEditor(QWidget):
    saved = Signal(str)  # the scenario file written

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Model settings saved with the scenario (the window passes the Policy tab's).
        self.model_edits: Callable[[], dict[str, Any]] = dict
        self._ref: str | None = None
        self._path: Path | None = None
        self._source = ""
        self._read_only = False
        self._data: dict[str, Any] = {}  # the file's tables as read: the baseline
        self._base = ScenarioEdits()
        self._problem = ""  # the core's one-line verdict on the edited scenario
        self._schema_error = ""
        self._filling = False
        # The unsaved edits of a scenario left for another (and its tools' origins), per ref.
        self._drafts: dict[str, _Draft] = {}

        self.heading = QLabel("No scenario selected", self)
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        note = QLabel(
            "Model and provider: Policy tab (saved with these). Validators: the validators table.",
            self,
        )
        note.setWordWrap(True)
        note.setEnabled(False)  # greyed: a hint, not a field
        self.problem_label = error_label(self)
        self.problem_label.setObjectName("scenarioProblem")

        self.system = QPlainTextEdit(self)
        self.system.setObjectName("systemPrompt")
        self.system.setPlaceholderText("The system prompt (empty: none)")
        self.system.setTabChangesFocus(True)
        self.user = text_box(self, 3)
        self.user.setObjectName("userMessage")
        self.user.setPlaceholderText("The user's message (empty: the messages below end the turn)")
        self.messages = MessagesEditor(self)
        self.tools = ToolsEditor(self)
        self.output = text_box(self, 6)
        self.output.setObjectName("outputSchema")
        self.output.setPlaceholderText("JSON schema of the final answer (empty: plain text)")
        self.output_error = error_label(self)

        self.save_button = QPushButton("Save", self)
        self.save_button.setToolTip("Write the edits to the scenario file (Ctrl+S)")
        self.revert_button = QPushButton("Revert", self)
        self.revert_button.setToolTip("Drop the edits: back to the scenario file")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)

        body = QWidget()
        fields = QVBoxLayout(body)
        fields.addWidget(_group("System prompt", self.system), 2)
        fields.addWidget(_group("User message", self.user))
        fields.addWidget(_group("Messages before it", self.messages))
        fields.addWidget(_group("Tools", self.tools))
        fields.addWidget(_group("Output schema", self.output, self.output_error))
        fields.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(note)
        layout.addWidget(self.problem_label)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)

        for signal in (
            self.system.textChanged, self.user.textChanged, self.output.textChanged,
            self.messages.changed, self.tools.changed,
        ):  # fmt: skip
            signal.connect(self._on_changed)
        self.save_button.clicked.connect(self.save)
        self.revert_button.clicked.connect(self.revert)
        # Only while the editor has focus: the window and the other editors keep their Ctrl+S.
        self.save_shortcut = QShortcut(QKeySequence("Ctrl+S"), self)
        self.save_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.save_shortcut.activated.connect(self.save)
        self.set_scenario(None, None)

    # ---- the scenario ----------------------------------------------------------------------

    @property
    def ref(self) -> str | None:
        return self._ref

    @property
    def read_only(self) -> bool:
        return self._read_only

    def set_scenario(self, ref: str | None, scenario: Scenario | None) -> None:
        """Shows scenario ``ref`` (a path or ``demo:NAME``) as its file says. The unsaved edits
        of another scenario are kept and shown again with it; those of ``ref`` itself are
        dropped (re-read). ``scenario`` None: it did not load; its file is still shown when it
        parses, so the problem can be fixed here."""
        left = self._ref
        if left is not None and ref != left and self._path is not None and self.is_edited():
            edited = changes(self._base, self.edits())
            self._drafts[left] = _Draft(edited, self._base.tools, self.tools.origins())
        self._ref, self._path, self._read_only, self._data = ref, None, False, {}
        load_error = ""
        if ref is not None:
            try:
                path, source, read_only = scenario_file(ref)
                doc = ScenarioDocument.load(path, source=source)
            except ScenarioError as exc:
                load_error = str(exc)
            else:
                self._path, self._source, self._read_only = path, source, read_only
                self._data = doc.to_dict()
        self._base = ScenarioEdits.from_data(self._data)
        draft = self._drafts.pop(ref, None) if ref is not None and self._path else None
        if draft is None:
            self._fill(self._base)
        else:  # only what was edited: the file may have changed meanwhile, its other parts stay
            origins = draft.origins if draft.tools_base == self._base.tools else None
            self._fill(with_changes(self._base, draft.changes), origins)
        self.setEnabled(self._path is not None)
        self._update_heading(scenario)
        self._check()
        if load_error:
            self._show_problem(load_error)

    def revert(self) -> None:
        self._fill(self._base)
        self._check()

    def _fill(self, edits: ScenarioEdits, origins: list[int | None] | None = None) -> None:
        self._filling = True
        try:
            self.system.setPlainText(edits.system)
            self.user.setPlainText(edits.user or "")
            self.messages.set_messages(edits.messages)
            self.tools.set_tools(edits.tools, origins)
            schema = edits.output_schema
            self.output.setPlainText("" if schema is None else json_text(schema))
        finally:
            self._filling = False

    def _update_heading(
        self, scenario: Scenario | None = None, edited_now: bool | None = None
    ) -> None:
        if self._path is None:
            self.heading.setText("No scenario selected" if self._ref is None else self._ref)
            return
        name = scenario.name if scenario is not None else self._data.get("name", self._source)
        demo = " — built-in demo: saving makes a copy" if self._read_only else ""
        is_edited = self.is_edited() if edited_now is None else edited_now
        edited = " (edited, not saved)" if is_edited else ""
        self.heading.setText(f"{name} · {self._source}{demo}{edited}")

    # ---- the edits -------------------------------------------------------------------------

    def unsaved(self) -> list[str]:
        """What would be lost on quitting: the scenarios edited here and not saved."""
        refs = [*self._drafts]
        if self._ref is not None and self._path is not None and self.is_edited():
            refs = [self._ref, *(r for r in refs if r != self._ref)]
        return [f"{ref} (scenario)" for ref in refs]

    def edits(self) -> ScenarioEdits:
        """The values in the editor (a JSON field that does not parse keeps the file's)."""
        try:
            schema = parse_schema(self.output.toPlainText())
        except ValueError:
            schema = self._base.output_schema
        user = self.user.toPlainText()
        return ScenarioEdits(
            system=self.system.toPlainText(),
            user=user if user or self._base.user == "" else None,  # `user = ""` stays as read
            messages=self.messages.messages(),
            tools=self.tools.tools(),
            output_schema=schema,
        )

    def is_edited(self) -> bool:
        return bool(changes(self._base, self.edits()))

    def overrides(self) -> list[str]:
        """The unsaved edits as ``--set`` overrides (``[]`` when nothing was edited): what the
        next run applies, and records."""
        if self._path is None:
            return []
        return overrides(self._base, self.edits())[0]

    def errors(self) -> dict[str, str]:
        """``field → message`` for every edit that cannot run: JSON that does not parse, a
        removal only a save can make, and the core's verdict on the edited scenario."""
        return self._errors(self.edits())

    def _errors(self, now: ScenarioEdits) -> dict[str, str]:
        if self._path is None:
            return {}
        found = dict(self.tools.errors())
        if self._schema_error:
            found[OUTPUT_SCHEMA] = self._schema_error
        found.update(overrides(self._base, now)[1])
        if self._problem:
            found["scenario"] = self._problem
        return found

    def _on_changed(self) -> None:
        if self._filling:
            return
        edited = self._check()
        self._update_heading(edited_now=bool(edited))

    def _check(self) -> dict[str, Any]:
        """Shows what cannot run (as the user types); returns the edits against the file (the
        editor's values read once per keystroke, not once per question)."""
        now = self.edits()
        edited = changes(self._base, now)
        try:
            parse_schema(self.output.toPlainText())
            self._schema_error = ""
        except ValueError as exc:
            self._schema_error = str(exc)
        self.output_error.setText(self._schema_error)
        self.output_error.setVisible(bool(self._schema_error))
        self._problem = ""
        if self._path is not None:
            data = apply_changes(copy.deepcopy(self._data), edited)
            try:
                scenario_from_dict(data, source=self._source, base_dir=self._path.parent)
            except ScenarioError as exc:
                self._problem = str(exc)
        # On top, where it is seen whatever the scroll position: the first thing to fix.
        first = next(iter(self._errors(now).items()), None)
        if first is None:
            self._show_problem("")
        else:
            self._show_problem(first[1] if first[0] == "scenario" else f"{first[0]}: {first[1]}")
        return edited

    def _show_problem(self, text: str) -> None:
        self.problem_label.setText(text)
        self.problem_label.setVisible(bool(text))

    # ---- saving ----------------------------------------------------------------------------

    def ask_copy_path(self, original: Path) -> Path | None:
        """Where a demo's copy goes (a method, so tests can answer the dialog)."""
        return ask_copy_path(self, original)

    def save(self) -> bool:
        """Writes the edits to the scenario file, its comments kept (a demo: to a copy the user
        names). False, with the reason shown, when nothing was written."""
        if self._path is None:
            return False
        saving_fixes = overrides(self._base, self.edits())[1]  # removals: what a save is for
        blocking = [
            f"{field}: {message}"
            for field, message in self.errors().items()
            if field != "scenario" and field not in saving_fixes
        ]
        if blocking:
            self._show_problem(blocking[0])
            return False
        target = self._path
        if self._read_only:
            chosen = self.ask_copy_path(self._path)
            if chosen is None:
                return False
            target = chosen
        try:
            # Read afresh: what other editors (or another program) saved meanwhile stays.
            doc = ScenarioDocument.load(self._path, source=self._source)
            same_tools = doc.tools == self._base.tools
            origins: list[int | None] = (
                self.tools.origins() if same_tools else [None] * len(self.tools.tools())
            )
            write_changes(doc, changes(self._base, self.edits()), origins)
            for field, value in self.model_edits().items():  # the Policy tab's model settings
                doc.set(f"model.{field}", value)
            written = save_document(doc, self._read_only, target)
            scenario = doc.validate()
        except ScenarioError as exc:
            self._show_problem(str(exc))
            return False
        ref = self._ref if written == self._path and self._ref else str(written)
        left = self._ref
        self.set_scenario(ref, scenario)
        if left is not None:
            self._drafts.pop(left, None)  # saved (a demo: to its copy): nothing to keep
        self.saved.emit(str(written))
        return True
