"""Paints the compare grid's step and summary cells as coloured pieces (status dot and word,
verdict marks, tokens, markers) in the timeline's colours, and tints the first divergence row.
Stateless: everything comes from the model's roles, so 1,000-step runs cost nothing extra."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from inspector.app.compare.compare_item_model import (
    CELL_ROLE,
    DIVERGES_ROLE,
    ROW_KIND_ROLE,
    marks,
    termination_text,
)
from inspector.app.theme import is_dark, mix, status_colour
from inspector.core.records import VERDICT_MARK
from inspector.reports.compare import Outcome, StepCell
from inspector.reports.labels import words

Index = QModelIndex | QPersistentModelIndex
# A run's status in the colour of the step status that means the same.
RUN_STATUS_COLOUR = {
    "succeeded": "success",
    "failed": "failed_validation",
    "fallback": "empty",
    "error": "error",
    "cancelled": "cancelled",
}
DIVERGENCE_TINT = ("#f6c343", "#b7791f")  # amber, light / dark palette
GAP = 8


def divergence_colour(palette: QPalette) -> QColor:
    dark = is_dark(palette)
    tint = QColor(DIVERGENCE_TINT[1 if dark else 0])
    return mix(palette.color(QPalette.ColorRole.Base), tint, 0.35 if dark else 0.3)


Piece = tuple[str, QColor]


def step_pieces(cell: StepCell, text: QColor, muted: QColor, dark: bool) -> list[Piece]:
    # Short pieces first, so that a narrow column still shows attempt and verdicts.
    pieces: list[Piece] = [("●", status_colour(cell.status, dark)), (f"a{cell.attempt}", text)]
    pieces += [
        (VERDICT_MARK.get(v.status, "?"), status_colour(v.status, dark)) for v in cell.verdicts
    ]
    pieces.append((words(cell.status), text))
    pieces.append((f"{cell.input_tokens}→{cell.output_tokens} tok", muted))
    pieces += [(m, status_colour("marker", dark)) for m in marks(cell)]
    return pieces


def outcome_pieces(outcome: Outcome, text: QColor, muted: QColor, dark: bool) -> list[Piece]:
    colour = status_colour(RUN_STATUS_COLOUR.get(outcome.status, "cancelled"), dark)
    return [
        ("●", colour),
        (outcome.status, text),
        (termination_text(outcome), muted),
        (f"{outcome.attempts_used}/{outcome.max_attempts} att", text),
        (f"{outcome.total_tokens} tok", text),
        (f"{outcome.duration_ms / 1000:.2f} s", muted),
    ]


class CompareDelegate(QStyledItemDelegate):
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        painter.save()
        painter.setClipRect(option.rect)
        if index.data(DIVERGES_ROLE):
            painter.fillRect(option.rect, divergence_colour(option.palette))
        cell = index.data(CELL_ROLE)
        kind = index.data(ROW_KIND_ROLE)
        if kind == "step" and cell is None:  # this run ended before this step
            text = option.palette.color(QPalette.ColorRole.Text)
            muted = mix(text, option.palette.color(QPalette.ColorRole.Base), 0.5)
            self._paint_pieces(painter, option, [("— not reached", muted)])
            painter.restore()
            return
        if kind not in ("step", "outcome") or cell is None:
            super().paint(painter, option, index)
            painter.restore()
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        muted = mix(text, palette.color(QPalette.ColorRole.Base), 0.4) if not selected else text
        dark = is_dark(palette)
        if isinstance(cell, StepCell):
            pieces = step_pieces(cell, text, muted, dark)
        else:
            pieces = outcome_pieces(cell, text, muted, dark)
        self._paint_pieces(painter, option, pieces)
        painter.restore()

    def _paint_pieces(
        self, painter: QPainter, option: QStyleOptionViewItem, pieces: list[Piece]
    ) -> None:
        metrics = QFontMetrics(option.font)
        painter.setFont(option.font)
        rect = option.rect
        x, right = rect.left() + 6, rect.right() - 4
        for position, (word, colour) in enumerate(pieces):
            if x >= right:
                break
            width = metrics.horizontalAdvance(word)
            if x + width > right:
                word = metrics.elidedText(word, Qt.TextElideMode.ElideRight, right - x)
            painter.setPen(colour)
            painter.drawText(
                QRect(x, rect.top(), right - x, rect.height()), Qt.AlignmentFlag.AlignVCenter, word
            )
            # Verdict marks sit close together; other pieces get a gap.
            tight = (
                len(word) == 1 and position + 1 < len(pieces) and len(pieces[position + 1][0]) == 1
            )
            x += width + (2 if tight else GAP)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        hint = super().sizeHint(option, index)
        hint.setHeight(QFontMetrics(option.font).height() + 8)
        return hint
