"""A ``Comparison`` as a table: a column per run; rows for the policy and scenario fields that
differ, the outcome (summary), then one row per step index. The delegate paints the step and
outcome cells from ``CELL_ROLE``; the text roles say the same in words (and feed tooltips)."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.core.records import VERDICT_MARK
from inspector.reports.compare import Comparison, FieldDiff, Outcome, StepCell, StepRow
from inspector.reports.compare_text import divergence_what, show, step_marks
from inspector.reports.labels import why_ended, words

_Index = QModelIndex | QPersistentModelIndex
RowKind = Literal["policy", "scenario", "outcome", "step"]
ROW_KIND_ROLE = Qt.ItemDataRole.UserRole + 1  # RowKind
CELL_ROLE = Qt.ItemDataRole.UserRole + 2  # StepCell | Outcome | a field's value | None
DIVERGES_ROLE = Qt.ItemDataRole.UserRole + 3  # bool: the first step where the runs part ways
STEP_ROLE = Qt.ItemDataRole.UserRole + 4  # the step index of a step row, else None


class _Row(NamedTuple):
    kind: RowKind
    item: FieldDiff | StepRow | None


def divergence_reason(comparison: Comparison) -> str:
    """The first divergence in words, e.g. "step 4: the requests differ at messages[3]"."""
    divergence = comparison.divergence
    if divergence is None:
        return "No divergence: every step sent and received the same in every run."
    return f"First divergence at step {divergence.index}: {divergence_what(divergence)}"


def step_text(cell: StepCell | None) -> str:
    if cell is None:
        return ""
    parts = [f"a{cell.attempt} {words(cell.status)}"]
    if cell.verdicts:
        parts.append("".join(VERDICT_MARK.get(v.status, "?") for v in cell.verdicts))
    parts.append(f"in {cell.input_tokens} · out {cell.output_tokens}")
    parts += marks(cell)
    return "  ".join(parts)


def marks(cell: StepCell) -> list[str]:
    return step_marks(cell.cleared, cell.forced)


def step_tooltip(cell: StepCell | None, index: int) -> str:
    if cell is None:
        return f"This run never reached step {index}."
    lines = [f"step {index}, attempt {cell.attempt}: {words(cell.status)}"]
    if cell.tool_calls:
        lines.append("calls " + ", ".join(cell.tool_calls))
    for verdict in cell.verdicts:
        reason = f": {verdict.reason}" if verdict.reason else ""
        mark = VERDICT_MARK.get(verdict.status, "?")
        lines.append(f"{mark} {verdict.validator} {verdict.status}{reason}")
    lines.append(f"tokens in {cell.input_tokens} · out {cell.output_tokens}")
    if cell.latency_ms is not None:
        lines.append(f"model latency {cell.latency_ms:.0f} ms")
    lines += marks(cell)
    if cell.error:
        lines.append(f"error: {cell.error}")
    return "\n".join(lines)


def termination_text(outcome: Outcome) -> str:
    return words(why_ended(outcome.termination, outcome.fallback_trigger)) or "—"


def outcome_text(outcome: Outcome) -> str:
    """The summary cell: status, termination, attempts, total tokens and latency."""
    return "  ".join(
        [
            outcome.status,
            termination_text(outcome),
            f"{outcome.attempts_used}/{outcome.max_attempts} attempts",
            f"{outcome.total_tokens} tokens",
            f"{outcome.duration_ms / 1000:.2f} s (model {outcome.latency_ms / 1000:.2f} s)",
        ]
    )


def outcome_tooltip(outcome: Outcome) -> str:
    lines = [
        f"status {outcome.status}, ended by {termination_text(outcome)}",
        f"attempts {outcome.attempts_used}/{outcome.max_attempts}, "
        f"steps {outcome.steps_used}/{outcome.max_steps}",
        f"tokens in {outcome.input_tokens} · out {outcome.output_tokens} "
        f"(total {outcome.total_tokens})",
        f"duration {outcome.duration_ms:.0f} ms, model latency {outcome.latency_ms:.0f} ms",
        f"output {show(outcome.output)[:500]}",
    ]
    if outcome.error:
        lines.append(f"error {outcome.error}")
    return "\n".join(lines)


class CompareItemModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.comparison: Comparison | None = None
        self._rows: list[_Row] = []

    def set_comparison(self, comparison: Comparison | None) -> None:
        self.beginResetModel()
        self.comparison = comparison
        self._rows = []
        if comparison is not None:
            self._rows += [_Row("policy", d) for d in comparison.policy_diffs]
            self._rows += [_Row("scenario", d) for d in comparison.scenario_diffs]
            self._rows.append(_Row("outcome", None))
            self._rows += [_Row("step", s) for s in comparison.steps]
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self.comparison is None:
            return 0
        return len(self.comparison.runs)

    def row_of_step(self, index: int) -> int:
        """The table row of step ``index`` (-1: no such step)."""
        first = next((r for r, row in enumerate(self._rows) if row.kind == "step"), len(self._rows))
        row = first + index - 1
        return row if index >= 1 and row < len(self._rows) else -1

    def divergence_row(self) -> int:
        if self.comparison is None or self.comparison.divergence is None:
            return -1
        return self.row_of_step(self.comparison.divergence.index)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        comparison = self.comparison
        if comparison is None:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if not 0 <= section < len(comparison.runs):
                return None
            run = comparison.runs[section]
            if role == Qt.ItemDataRole.DisplayRole:
                return f"{section + 1}: {run.run_id[:8]}" + (" ↻" if run.replay_of else "")
            if role == Qt.ItemDataRole.ToolTipRole:
                replay = f"\nreplay of {run.replay_of}" if run.replay_of else ""
                return f"run {run.run_id} · {run.scenario}\nstarted {run.started_at}{replay}"
            return None
        if not 0 <= section < len(self._rows):
            return None
        row = self._rows[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._row_label(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            if isinstance(row.item, StepRow) and self._diverges(row):
                return divergence_reason(comparison)
            if isinstance(row.item, StepRow) and not row.item.same:
                return "The runs differ at this step."
        return None

    def _row_label(self, row: _Row) -> str:
        if isinstance(row.item, FieldDiff):
            return f"{row.kind} · {row.item.field}"
        if isinstance(row.item, StepRow):
            mark = "▶ " if self._diverges(row) else "≠ " if not row.item.same else ""
            return f"{mark}step {row.item.index}"
        return "summary"

    def _diverges(self, row: _Row) -> bool:
        divergence = self.comparison.divergence if self.comparison else None
        return (
            divergence is not None
            and isinstance(row.item, StepRow)
            and row.item.index == divergence.index
        )

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        comparison = self.comparison
        if comparison is None or not index.isValid():
            return None
        r, column = index.row(), index.column()
        if not (0 <= r < len(self._rows) and 0 <= column < len(comparison.runs)):
            return None
        row = self._rows[r]
        if role == ROW_KIND_ROLE:
            return row.kind
        if role == DIVERGES_ROLE:
            return self._diverges(row)
        if role == STEP_ROLE:
            return row.item.index if isinstance(row.item, StepRow) else None
        if isinstance(row.item, FieldDiff):
            value = row.item.values[column]
            if role == CELL_ROLE:
                return value
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                return show(value)
            return None
        if isinstance(row.item, StepRow):
            cell = row.item.cells[column]
            if role == CELL_ROLE:
                return cell
            if role == Qt.ItemDataRole.DisplayRole:
                return step_text(cell)
            if role == Qt.ItemDataRole.ToolTipRole:
                return step_tooltip(cell, row.item.index)
            return None
        outcome = comparison.outcomes[column]
        if role == CELL_ROLE:
            return outcome
        if role == Qt.ItemDataRole.DisplayRole:
            return outcome_text(outcome)
        if role == Qt.ItemDataRole.ToolTipRole:
            return outcome_tooltip(outcome)
        return None
