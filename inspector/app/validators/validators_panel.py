"""The "Validators" panel (the window docks it beside Policy): the scenario's python validators
file in a code editor, its ``[[validators]]`` as a table, and the verdicts that flip when they
change. It touches the store's path (to re-validate) and a notifier; it asks the window through
signals to mark flips in the timeline, select a step or a run, or show a saved copy.

Every save (either editor) and every outside edit of the python file re-validates the shown run
— or, with "Re-validate every run of this scenario", all its recorded runs — offline
(``Revalidator``): the flipped steps are highlighted in the timeline and listed under "Flips";
a syntax error or a raising validator shows at its line in the editor and as ``error`` verdicts.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.app.runtime.notifier import Notifier
from inspector.app.validators.flips_view import FlipsView
from inspector.app.validators.python_file_editor import PythonFileEditor
from inspector.app.validators.revalidation import RevalidationResult, Revalidator, python_files
from inspector.app.validators.validators_table import ValidatorsTable
from inspector.core.errors import InspectorError
from inspector.core.live import LiveRun
from inspector.core.revalidate import Flip
from inspector.core.scenario import Scenario
from inspector.resources import DEMO_PREFIX, resolve_scenario

__all__ = ["NEW_VALIDATORS", "ValidatorsPanel"]

NEW_FILE_NAME = "validators.py"
NEW_VALIDATORS = '''"""Python validators of this scenario. Reference one in the scenario TOML:

    [[validators]]
    kind = "python"
    function = "validators.py:no_exclamation"
    feedback = "Do not use exclamation marks."  # optional

A validator gets the candidate output and ``ctx`` (ctx.attempt, ctx.step, ctx.history,
ctx.stop()) and returns None or True (pass), False or a string (fail; the string is the
feedback the model gets), or a Verdict. Save (Ctrl+S) re-validates the recorded outputs.
"""


def no_exclamation(output, ctx):
    if "!" in str(output):
        return "Do not use exclamation marks."
    return None
'''
HOW_TO_REFERENCE = (
    "Reference a function of it from the scenario TOML, then save the scenario:<br>"
    '<code>[[validators]]<br>kind = "python"<br>function = "{name}:no_exclamation"</code>'
)


class ValidatorsPanel(QWidget):
    flipsChanged = Signal(object)  # {step: [Flip]} of the shown run: the timeline marks them
    stepRequested = Signal(int)  # a flip of the shown run was activated: select its step
    runRequested = Signal(str)  # a flip of another run: show that run (then its step)
    copySaved = Signal(str)  # a demo saved as a copy: the copy is the scenario from now on

    def __init__(self, store_path: Path, notify: Notifier, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._notify = notify
        self._ref: str | None = None  # the scenario whose validators are shown
        self._scenario: Scenario | None = None
        self._shown: LiveRun | None = None
        self._result: RevalidationResult | None = None
        self._pending_step: tuple[str, int] | None = None  # a flip to select once its run shows
        self._created: list[Path] = []  # "New validators.py" files not referenced yet
        self.revalidator = Revalidator(store_path, self)

        self.python_editor = PythonFileEditor(self)
        self.table = ValidatorsTable(self)
        self.flips = FlipsView(self)
        self.file_combo = QComboBox(self)
        self.file_combo.setObjectName("validatorsFile")
        self.file_combo.setToolTip("The python validators file to edit")
        self.new_button = QPushButton(f"New {NEW_FILE_NAME}", self)
        self.new_button.setToolTip(f"Create {NEW_FILE_NAME} with an example validator")
        self.note = QLabel(self)
        self.note.setObjectName("validatorsNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.every_run_box = QCheckBox("Re-validate every run of this scenario", self)
        self.every_run_box.setToolTip(
            "Off: only the run shown in the timeline is re-validated on save"
        )

        python_tab = QWidget(self)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.file_combo, 1)
        bar.addWidget(self.new_button)
        python_layout = QVBoxLayout(python_tab)
        python_layout.setContentsMargins(4, 4, 4, 4)
        python_layout.addLayout(bar)
        python_layout.addWidget(self.note)
        python_layout.addWidget(self.python_editor, 1)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(python_tab, "Python")
        self.tabs.addTab(self.table, "Declarative")
        # The flips stay in view under the editors: a save shows its effect without a click.
        self.flips_title = QLabel(self)
        self.flips_title.setObjectName("flipsTitle")
        flips_box = QWidget(self)
        flips_layout = QVBoxLayout(flips_box)
        flips_layout.setContentsMargins(4, 4, 4, 0)
        flips_layout.setSpacing(0)
        flips_layout.addWidget(self.flips_title)
        flips_layout.addWidget(self.flips, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(flips_box)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.every_run_box)

        self.python_editor.saved.connect(self._python_saved)
        self.python_editor.reloaded.connect(self._python_saved)
        self.table.saved.connect(self._table_saved)
        self.file_combo.activated.connect(self._file_chosen)
        self.new_button.clicked.connect(self.new_validators_file)
        self.every_run_box.toggled.connect(self._every_run_toggled)
        self.flips.flipActivated.connect(self._flip_activated)
        self.revalidator.finished.connect(self._finished)
        self.revalidator.failed.connect(self._failed)
        self.set_scenario(None)

    # ---- what is shown -------------------------------------------------------------------------

    @property
    def is_demo(self) -> bool:
        return self._ref is not None and self._ref.startswith(DEMO_PREFIX)

    def set_scenario(self, ref: str | None, scenario: Scenario | None = None) -> None:
        """Shows the validators of scenario ``ref`` (a path or ``demo:NAME``; None: none);
        ``scenario``: ``ref`` already loaded (else it is read here)."""
        if ref != self._ref:
            self._created = []
            self._result = None
            self.revalidator.cancel()
            self.flips.show_message("Save a validator to re-validate the recorded outputs.")
            self._set_flips_title(None)
            self.flipsChanged.emit({})
        self._ref = ref
        self._scenario = None
        error = ""
        if scenario is not None:
            self._scenario = scenario
        elif ref is not None:
            try:
                self._scenario = resolve_scenario(ref)
            except InspectorError as exc:
                error = str(exc)
        self.table.set_scenario_file(ref if self._scenario is not None else None)
        self._fill_files(error)

    def _fill_files(self, error: str = "") -> None:
        scenario = self._scenario
        current = self.python_editor.path()
        files = python_files(scenario) if scenario is not None else []
        files += [f for f in self._created if f not in files]
        self.file_combo.clear()
        for path in files:
            self.file_combo.addItem(self._label(path), str(path))
        self.file_combo.setVisible(len(files) > 1)
        self.python_editor.setVisible(bool(files))
        self.python_editor.setEnabled(not self.is_demo)
        existing = [f for f in files if f.exists()]
        self.new_button.setVisible(scenario is not None and not existing and not self.is_demo)
        if files:
            chosen = current if current in files else files[0]
            self.file_combo.setCurrentIndex(files.index(chosen))
            if chosen != current:
                self._open(chosen)
        self.note.setText(self._note(error, files))
        self.note.setVisible(bool(self.note.text()))

    def _label(self, path: Path) -> str:
        base = self._scenario.base_dir.resolve() if self._scenario is not None else None
        if base is not None and path.is_relative_to(base):
            return str(path.relative_to(base))
        return str(path)

    def _open(self, path: Path) -> None:
        """Opens ``path`` in the editor; the unsaved edits of the file left are kept (and said)."""
        kept = set(self.python_editor.drafts())
        left = self.python_editor.path()
        self.python_editor.open_file(path)
        if left is not None and left not in kept and left in self.python_editor.drafts():
            self._notify.show_message(
                "info", f"Your unsaved edits of {left.name} are kept: open it again to save them."
            )
        self._show_problems()

    def _note(self, error: str, files: list[Path]) -> str:
        if error:
            return f"The scenario cannot be loaded: {error}"
        if self._scenario is None:
            return "Choose a scenario to edit its validators."
        if self.is_demo:
            return (
                "Built-in demos are read-only. File › Edit a copy of this demo (Ctrl+Shift+E) "
                "makes a copy, with its python files, to edit and save."
            )
        if not files:
            return (
                f"This scenario has no python validators. “New {NEW_FILE_NAME}” creates one "
                "next to the scenario file with an example validator."
            )
        unreferenced = [f for f in self._created if f in files]
        if unreferenced:
            return HOW_TO_REFERENCE.format(name=unreferenced[0].name)
        return ""

    def show_run(self, run: LiveRun) -> None:
        """The window shows ``run``: its flips from the last re-validation, if it was in it;
        a run of another scenario brings that scenario's validators (when its file is here)."""
        self._shown = run
        name = self._run_scenario(run)
        if name and (self._scenario is None or name != self._scenario.name):
            origin = self._run_origin(run)
            if origin.startswith(DEMO_PREFIX) or (origin and Path(origin).is_file()):
                self.set_scenario(origin)
        self._show_timeline_flips()
        if self._pending_step is not None and self._pending_step[0] == run.run_id:
            self.stepRequested.emit(self._pending_step[1])
            self._pending_step = None

    @staticmethod
    def _run_scenario(run: LiveRun) -> str:
        if run.record is not None:
            return run.record.scenario
        return run.header.scenario if run.header is not None else ""

    @staticmethod
    def _run_origin(run: LiveRun) -> str:
        """The scenario file (or ``demo:NAME``) the run was started from; a stored run has its
        record, a live one only its header so far."""
        if run.record is not None:
            return run.record.scenario_origin
        return run.header.scenario_origin if run.header is not None else ""

    # ---- re-validating -------------------------------------------------------------------------

    def revalidate(self) -> None:
        """The shown run (when it is of this scenario) or every run of the scenario, re-judged
        by the validators on disk now; with no run, only the files' problems."""
        if self._ref is None or self._scenario is None:
            return
        shown = self._shown
        ids = []
        if shown is not None and shown.run_id and self._run_scenario(shown) == self._scenario.name:
            ids = [shown.run_id]
        every = self.every_run_box.isChecked()
        self.flips.show_message("Re-validating…")
        self.revalidator.revalidate(self._ref, ids, every_run=every)

    def _python_saved(self, _path: str) -> None:
        self.revalidate()

    def _table_saved(self, path: str) -> None:
        if self._ref is not None and Path(path) != Path(self._ref):
            self.copySaved.emit(path)  # the window shows it (and calls set_scenario)
        else:
            self.set_scenario(self._ref)  # its python files may have changed
        self.revalidate()

    def _every_run_toggled(self, _on: bool) -> None:
        if self._result is not None:
            self.revalidate()

    def _finished(self, result: RevalidationResult) -> None:
        self._result = result
        if result.runs or result.matrix is not None:
            self.flips.show_result(result)
        elif result.errors:  # e.g. the shown run is still being recorded
            self.flips.show_message("\n".join(result.errors))
        else:
            self.flips.show_message(
                "No run to re-validate: run the scenario, or pick one of its runs."
            )
        self._set_flips_title(result.flips if result.runs else None)
        self._show_timeline_flips()
        self._show_problems()

    def _failed(self, message: str) -> None:
        self.flips.show_message(message)
        self._notify.show_message("error", message)

    def _show_timeline_flips(self) -> None:
        shown, result = self._shown, self._result
        flips: dict[int, list[Flip]] = {}
        if shown is not None and result is not None:
            for run in result.runs:
                if run.run_id == shown.run_id:
                    for flip in run.flips:
                        flips.setdefault(flip.step, []).append(flip)
        self.flipsChanged.emit(flips)

    def _show_problems(self) -> None:
        path = self.python_editor.path()
        result = self._result
        self.python_editor.show_problems(
            result.problems.get(path.resolve(), []) if result and path else []
        )

    def _set_flips_title(self, flips: int | None) -> None:
        self.flips_title.setText("<b>Flips</b>" if flips is None else f"<b>Flips ({flips})</b>")

    # ---- intents -------------------------------------------------------------------------------

    def _file_chosen(self, row: int) -> None:
        path = Path(self.file_combo.itemData(row))
        if path != self.python_editor.path():
            self._open(path)

    def new_validators_file(self) -> Path | None:
        """Creates the scenario's missing python file (or ``validators.py`` next to it) with an
        example validator, and opens it; an existing file is opened, never overwritten."""
        scenario = self._scenario
        if scenario is None or self.is_demo:
            return None
        missing = [f for f in python_files(scenario) if not f.exists()]
        path = missing[0] if missing else (scenario.base_dir / NEW_FILE_NAME).resolve()
        if not path.exists():
            try:
                path.write_text(NEW_VALIDATORS, encoding="utf-8")
            except OSError as exc:
                self._notify.show_message("error", f"Cannot create {path}: {exc.strerror or exc}")
                return None
        if not missing:
            self._created.append(path)
        self._fill_files()
        self.python_editor.open_file(path)
        self.file_combo.setCurrentIndex(self.file_combo.findData(str(path)))
        return path

    def _flip_activated(self, run_id: str, step: int) -> None:
        shown = self._shown
        if shown is not None and shown.run_id == run_id:
            self.stepRequested.emit(step)
            return
        self._pending_step = (run_id, step)
        self.runRequested.emit(run_id)  # the window shows it; show_run selects the step
