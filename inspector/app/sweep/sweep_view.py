"""The Sweep tab: the grid (a line per varied field, policy fields one click away), repeat and
concurrency, Run/Cancel with a progress bar and its ETA, a stored sweep to open, then the per-arm
table and the charts. The view holds no logic: it calls ``SweepController``."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.sweep.arms_item_model import ArmsItemModel
from inspector.app.sweep.sweep_charts import SweepCharts
from inspector.app.sweep.sweep_controller import SweepController
from inspector.core.policy import Policy
from inspector.editing.form_fields import field_specs
from inspector.sweeps import SweepReport

_DONE = re.compile(r"^(\d+)/(\d+) runs")
DEFAULT_VARY = "policy.feedback_history=accumulate,latest,none"


def _vary_line(name: str) -> str:
    """``policy.NAME=`` with a choice field's every choice filled in (the values to type)."""
    spec = next(s for s in field_specs(Policy) if s.name == name)
    return f"policy.{name}=" + ",".join(spec.choices)


class SweepView(QWidget):
    def __init__(self, controller: SweepController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweepView")
        self.controller = controller
        self.scenario: str | None = None

        self.scenario_label = QLabel()
        self.vary = QPlainTextEdit(DEFAULT_VARY)
        self.vary.setObjectName("sweepVary")
        self.vary.setPlaceholderText("one field per line: SECTION.KEY=V1,V2 (as sweep --vary)")
        self.vary.setMaximumHeight(52)
        self.add_field = QComboBox()
        self.add_field.addItem("Vary a policy field…")
        self.add_field.addItems([s.name for s in field_specs(Policy)])
        self.add_field.activated.connect(self._add_field)
        self.repeat = QSpinBox(minimum=1, maximum=10_000, value=10, prefix="repeat ")
        self.concurrency = QSpinBox(minimum=1, maximum=64, value=4, prefix="at once ")
        self.run_button = QPushButton("Run sweep")
        self.run_button.setObjectName("sweepRun")
        self.run_button.clicked.connect(self._run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(controller.cancel)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(180)
        self.progress_text = QLabel()
        self.stored = QComboBox()
        self.stored.setObjectName("storedSweeps")
        self.stored.setMinimumContentsLength(14)
        self.stored.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(self._open)

        self.arms = ArmsItemModel()
        self.table = QTableView()
        self.table.setObjectName("sweepArms")
        self.table.setModel(self.arms)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setMinimumHeight(24 * 5 + 6)  # the header and 4 arms without scrolling
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.doubleClicked.connect(lambda index: controller.show_arm(index.row()))
        self.show_runs = QPushButton("Show the arm's runs")
        self.show_runs.clicked.connect(self._show_runs)
        self.show_all = QPushButton("Show all runs")
        self.show_all.clicked.connect(controller.show_all)
        self.compare = QPushButton("Compare the selected arms")
        self.compare.clicked.connect(self._compare)
        self.charts = SweepCharts()
        self.charts.armClicked.connect(controller.show_arm)
        self._lay_out()

        controller.reportChanged.connect(self.show_report)
        controller.progressChanged.connect(self._progress)
        controller.runningChanged.connect(self._running)
        controller.sweepsChanged.connect(self.refresh_stored)
        self.refresh_stored()

    def _lay_out(self) -> None:
        grid = QHBoxLayout()
        grid.addWidget(self.vary, 1)
        side = QVBoxLayout()
        side.addWidget(self.add_field)
        side.addWidget(self.repeat)
        side.addWidget(self.concurrency)
        grid.addLayout(side)
        run = QHBoxLayout()
        for widget in (self.run_button, self.cancel_button, self.progress):
            run.addWidget(widget)
        run.addWidget(self.progress_text, 1)
        run.addWidget(QLabel("Stored:"))
        run.addWidget(self.stored)
        run.addWidget(self.open_button)
        table_page = QWidget()
        table_box = QVBoxLayout(table_page)
        table_box.setContentsMargins(0, 0, 0, 0)
        table_box.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.show_runs)
        buttons.addWidget(self.show_all)
        buttons.addWidget(self.compare)
        buttons.addStretch(1)
        table_box.addLayout(buttons)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(table_page)
        split.addWidget(self.charts)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.scenario_label)
        layout.addLayout(grid)
        layout.addLayout(run)
        layout.addWidget(split, 1)
        self.set_scenario(None)

    # ---- what the window tells it --------------------------------------------------------------

    def set_scenario(self, ref: str | None) -> None:
        self.scenario = ref
        self.scenario_label.setText(
            f"Sweep <b>{ref}</b> (the scenario chosen in the library)"
            if ref
            else "Choose a scenario in the library to sweep it."
        )
        self.run_button.setEnabled(bool(ref) and not self.controller.running)

    def refresh_stored(self) -> None:
        self.stored.clear()
        for sweep_id, label in self.controller.stored():
            self.stored.addItem(label, sweep_id)
        self.open_button.setEnabled(self.stored.count() > 0)

    # ---- the controller's news ---------------------------------------------------------------

    def show_report(self, report: SweepReport | None) -> None:
        self.arms.set_report(report)
        self.charts.set_report(report)

    def _progress(self, line: str) -> None:
        self.progress_text.setText(line)
        done = _DONE.match(line)
        if done:
            self.progress.setMaximum(max(1, int(done.group(2))))
            self.progress.setValue(int(done.group(1)))

    def _running(self, running: bool) -> None:
        self.run_button.setEnabled(not running and bool(self.scenario))
        self.cancel_button.setEnabled(running)
        self.open_button.setEnabled(not running and self.stored.count() > 0)

    # ---- the user's clicks ---------------------------------------------------------------------

    def _add_field(self, index: int) -> None:
        if index > 0:
            self.vary.appendPlainText(_vary_line(self.add_field.itemText(index)))
            self.add_field.setCurrentIndex(0)

    def _run(self) -> None:
        if self.scenario:
            lines = self.vary.toPlainText().splitlines()
            self.controller.start(
                self.scenario, lines, self.repeat.value(), self.concurrency.value()
            )

    def _open(self) -> None:
        sweep_id = self.stored.currentData()
        if sweep_id:
            self.progress_text.setText("")
            self.controller.open_sweep(str(sweep_id))

    def _selected_rows(self) -> list[int]:
        return sorted({i.row() for i in self.table.selectionModel().selectedRows()})

    def _show_runs(self) -> None:
        rows = self._selected_rows()
        if rows:
            self.controller.show_arm(rows[0])

    def _compare(self) -> None:
        self.controller.compare_arms(self._selected_rows())
