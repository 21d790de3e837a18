"""Paints the timeline's rich cells: attempt header rows, status dots, verdict chips, forced-step
markers and the latency bar. Colours follow the palette (light or dark); cleared steps are
painted dimmed; steps whose verdicts flipped on re-validation get a tinted background, a border
and a chip per flip (the validator and its verdict now). A note row (a failed verdict's
reason, a validator error, the forced request, a flip, the feedback injected) is one line of
text in the note's colour from ``note_column`` to the right edge: each of its cells paints its
own slice of the line, so it reads as one without a span. Everything is drawn from the
cell's ``PaintCell`` (one call per cell) — the delegate keeps no state but caches of colours
and fonts."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QHelpEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolTip,
)

from inspector.app.theme import is_dark, mix, status_colour
from inspector.app.timeline import note_lines
from inspector.app.timeline.note_lines import draw_note
from inspector.app.timeline.text_fit import Elision
from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel, TimelineRole
from inspector.core.records import Verdict
from inspector.reports.labels import short_marker, verdict_label, words
from inspector.reports.timeline_cells import PaintCell, flip_chip

Index = QModelIndex | QPersistentModelIndex
__all__ = ["TimelineDelegate", "mix", "status_colour", "verdict_label"]  # kept importable here

CLEARED_OPACITY = 0.5
NOTE_INDENT = note_lines.NOTE_INDENT  # a note's text starts this far right of its column
# The colour a note kind is painted in (theme.STATUS_COLOURS); feedback is the text's own.
NOTE_COLOURS = {"fail": "fail", "error": "error", "forced": "marker", "flip": "flip"}
# Plain ints and flags for the per-cell paint path (an enum attribute read costs there).
_STEP, _STATUS, _VERDICTS, _MARKERS = (
    int(Column.STEP),
    int(Column.STATUS),
    int(Column.VERDICTS),
    int(Column.MARKERS),
)
_RICH = frozenset((_STATUS, _VERDICTS, _MARKERS, int(Column.LATENCY)))
_HAS_DISPLAY = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_LIT = QStyle.StateFlag.State_Selected | QStyle.StateFlag.State_MouseOver
_TEXT = QPalette.ColorRole.Text
_ELIDE = Qt.TextElideMode.ElideRight
_CENTRE = Qt.AlignmentFlag.AlignCenter
_ALIGN = (  # by PaintCell.right
    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
    Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
)
_VCENTRE = Qt.AlignmentFlag.AlignVCenter
# The same as plain ints: an enum flag passed to or read from Qt costs a Python enum operation.
_LIT_BITS = _LIT.value
_SELECTED_BITS = QStyle.StateFlag.State_Selected.value
_ALIGN_BITS = tuple(flag.value for flag in _ALIGN)
_VCENTRE_BITS = _VCENTRE.value
CHIP_GAP = 4
CHIP_PAD = 6
ELIDED_KEPT = 4096  # plain cells' elided texts kept (a few pages' worth)
_FONT_CHANGES = frozenset((QEvent.Type.FontChange, QEvent.Type.StyleChange))


def chip_rects(area: QRect, labels: list[str], metrics: QFontMetrics) -> list[QRect]:
    """Where each chip goes, left to right; chips that do not fit are left out, except the first,
    which is narrowed to the cell (its label is elided when painted)."""
    height = min(area.height() - 4, metrics.height() + 4)
    top = area.top() + (area.height() - height) // 2
    rects: list[QRect] = []
    x = area.left() + CHIP_GAP
    for label in labels:
        width = metrics.horizontalAdvance(label) + 2 * CHIP_PAD
        if x + width > area.right() - CHIP_GAP:
            if rects:
                break
            width = max(0, area.right() - CHIP_GAP - x)
        rects.append(QRect(x, top, width, height))
        x += width + CHIP_GAP
    return rects


_VERDICT_RANK = {"fail": 0, "error": 0}


def chip_order(verdicts: list[Verdict]) -> list[Verdict]:
    """Failing and erroring verdicts first (otherwise in their order), so that the ones that
    matter are never the ones hidden behind "+N"."""
    return sorted(verdicts, key=lambda v: _VERDICT_RANK.get(v.status, 1))


def latency_bar_width(width: int, fraction: float | None) -> int:
    """The latency bar's filled width in a Latency cell ``width`` wide (0: no bar)."""
    inner = width - 12
    if fraction is None or inner <= 4:
        return 0
    return max(3, round(inner * float(fraction)))


def latency_bar_colour(palette: QPalette, selected: bool) -> QColor:
    role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Highlight
    return palette.color(role)


def chip_label(metrics: QFontMetrics, label: str, width: int) -> str:
    """A chip's label in ``width``: whole, else its short form when that fits (``tool
    pinned`` → ``pinned``), else elided."""
    shown = metrics.elidedText(label, _ELIDE, width)
    short = short_marker(label) if shown != label else None
    return short if short and metrics.horizontalAdvance(short) <= width else shown


class TimelineDelegate(QStyledItemDelegate):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._margin: int | None = None  # the style's text margin, read once
        # Per palette (cacheKey) and font (key): what every painted cell would build again.
        self._palette_key = -1
        self._dark = False
        self._chip_colours: dict[str, tuple[QPen, QColor, QColor]] = {}
        self._track = QColor()
        self._fonts: dict[str, tuple[QFont, QFontMetrics]] = {}
        self._note_colours: dict[tuple[str, bool], QColor] = {}
        self._elided: dict[tuple[str, int], str] = {}  # (text, width) -> text as painted
        self._elision = Elision()  # what elidedText gives, with less text layout
        # (chip font key, cell width, height, *labels) -> each chip's place in the cell, label
        self._chip_layouts: dict[tuple[object, ...], list[tuple[QRect, str]]] = {}
        self.note_column = int(Column.KIND)  # where note rows start (the view moves it)
        self.status_words = True  # False: the Status column is its dot alone (a narrow page)
        if parent is not None:
            parent.installEventFilter(self)  # its font changes: the elided texts go

    @property
    def cached_elisions(self) -> dict[tuple[str, int], str]:
        """(text, width) -> the text as painted, elided to the width (``elided`` fills it)."""
        return self._elided

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parent():  # the view, not an editor: the base class's business
            if event.type() in _FONT_CHANGES:
                self._elided.clear()
                self._elision.clear()
                self._margin = None
            return False
        return super().eventFilter(watched, event)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        column = index.column()
        cell: PaintCell | None = (  # what the cell shows, in one call
            model.paint_cell(index.row(), column)
            if isinstance(model, TimelineItemModel)
            else index.data(TimelineRole.PAINT)
        )
        if cell is not None:
            self.paint_cell(painter, option, cell, column)

    def paint_cell(
        self, painter: QPainter, option: QStyleOptionViewItem, cell: PaintCell, column: int
    ) -> None:
        """Paints ``cell`` of ``column`` in ``option.rect`` (``paint`` without the index: the
        table's row painter calls it with the cell it read)."""
        if cell.header:  # every cell paints its slice of the header: it spans without a span
            self._paint_header(painter, option, cell)
            return
        if cell.note:
            self._paint_note(painter, option, cell, column)
            return
        lit = option.state.value & _LIT_BITS  # selected or hovered
        if not (column in _RICH or cell.flips or cell.cleared or lit):
            if cell.text:  # most cells: their text, as few calls into Qt as can be
                self._paint_plain(painter, option, cell.text, _ALIGN_BITS[cell.right])
            if column == _STEP:
                self._paint_strip(painter, option, cell.status)
            return
        painter.save()
        painter.setClipRect(option.rect)  # nothing a cell paints spills into its neighbours
        if cell.flips:
            self._paint_flip_band(painter, option)
        if cell.cleared:
            painter.setOpacity(CLEARED_OPACITY)
        if column in _RICH:
            if lit:  # a plain cell has no background of its own to draw
                self._paint_item(painter, option, "", _ALIGN[cell.right])
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            if column == _STATUS:
                self._paint_status(painter, option, cell)
            elif column == _VERDICTS:
                verdicts = chip_order(list(cell.verdicts))
                labels = [verdict_label(v) for v in verdicts]
                self._paint_chips(painter, option, labels, [v.status for v in verdicts])
            elif column == _MARKERS:
                labels = [label for label, _ in cell.markers]
                statuses = ["marker"] * len(labels)
                if cell.cleared:
                    labels.append("cleared")
                    statuses.append("cleared")
                # First: what re-validation changed is what the user is looking for.
                labels[0:0] = [flip_chip(f) for f in cell.flips]
                statuses[0:0] = ["flip"] * len(cell.flips)
                self._paint_chips(painter, option, labels, statuses)
            else:
                self._paint_latency(painter, option, cell)
        elif lit:  # selected or hovered: the style's highlight and text
            self._paint_item(painter, option, cell.text, _ALIGN[cell.right])
        else:  # a dimmed or flipped cell: its text, as the style lays it out
            self._paint_text(painter, option, cell.text, _ALIGN[cell.right])
        if column == _STEP:
            self._paint_strip(painter, option, cell.status)
        painter.restore()

    def _paint_strip(self, painter: QPainter, option: QStyleOptionViewItem, status: str) -> None:
        x, y, _, height = cast(tuple[int, int, int, int], option.rect.getRect())
        self.paint_strip(painter, option, status, x, y, height)

    def paint_strip(
        self, painter: QPainter, option: QStyleOptionViewItem, status: str, x: int, y: int, h: int
    ) -> None:
        """The row's status colour, as a strip on the left edge of its first cell (at ``x``,
        ``y``, ``h`` high)."""
        painter.fillRect(
            QRect(x, y + 1, 3, h - 2), status_colour(status, self._palette(option.palette))
        )

    def _paint_note(
        self, painter: QPainter, option: QStyleOptionViewItem, cell: PaintCell, column: int
    ) -> None:
        """This cell's slice of a note row's line: the line starts at ``note_column`` and runs
        to the viewport's right edge; the step's status strip goes on down its notes."""
        if column == _STEP:
            self._paint_strip(painter, option, cell.status)
        start = self.note_column
        if column < start:
            return
        painter.save()
        painter.setClipRect(option.rect)
        painter.setFont(option.font)
        painter.setPen(self._note_colour(cell.note, cell.cleared, option.palette))
        draw_note(painter, option, start, cell.text)
        painter.restore()

    def _note_colour(self, kind: str, cleared: bool, palette: QPalette) -> QColor:
        """A note's text colour: its kind's colour towards the text colour; a cleared step's
        notes further towards the background, still legible."""
        dark = self._palette(palette)
        made = self._note_colours.get((kind, cleared))
        if made is None:
            active = QPalette.ColorGroup.Active  # note rows are not enabled items
            text = palette.color(active, _TEXT)
            base = palette.color(active, QPalette.ColorRole.Base)
            status = NOTE_COLOURS.get(kind)
            made = mix(status_colour(status, dark), text, 0.3) if status else QColor(text)
            if cleared:
                made = mix(made, base, 0.35)
            self._note_colours[(kind, cleared)] = made
        return made

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: Index,
    ) -> bool:
        """Each verdict chip has its own tooltip: that validator's reason."""
        if event.type() == QEvent.Type.ToolTip and index.column() == Column.VERDICTS:
            verdicts = chip_order(index.data(TimelineRole.VERDICTS) or [])
            metrics = QFontMetrics(self._chip_font(option))
            rects = chip_rects(option.rect, [verdict_label(v) for v in verdicts], metrics)
            for rect, verdict in zip(rects, verdicts, strict=False):
                if rect.contains(event.pos()):
                    text = f"{verdict_label(verdict)} ({verdict.status})"
                    if verdict.reason:
                        text += f"\n{verdict.reason}"
                    QToolTip.showText(event.globalPos(), text, view)
                    return True
        return super().helpEvent(event, view, option, index)

    # -- pieces -----------------------------------------------------------------------------

    def _paint_flip_band(self, painter: QPainter, option: QStyleOptionViewItem) -> None:
        """A flipped step's row: tinted, with a border above and below (every cell paints its
        part, so the band spans the row)."""
        colour = status_colour("flip", is_dark(option.palette))
        base = option.palette.color(QPalette.ColorRole.Base)
        rect = option.rect
        painter.fillRect(rect, mix(base, colour, 0.16))
        painter.setPen(QPen(colour, 1))
        painter.drawLine(rect.topLeft(), rect.topRight())
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())

    def _paint_item(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        text: str,
        alignment: Qt.AlignmentFlag,
    ) -> None:
        """What ``QStyledItemDelegate.paint`` draws (background, selection, text, focus), from
        the text given: its ``initStyleOption`` would read ~8 roles from the model."""
        opt = QStyleOptionViewItem(option)
        if text:
            opt.text = text
            opt.features |= _HAS_DISPLAY
            opt.displayAlignment = alignment
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)

    def _paint_text(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        text: str,
        alignment: Qt.AlignmentFlag,
    ) -> None:
        """What ``_paint_item`` draws for a plain cell, without the style's per-cell text
        layout (the largest part of a page's paint)."""
        if not text:
            return
        margin = self.text_margin(option)
        rect = option.rect.adjusted(margin, 0, -margin, 0)
        painter.setPen(option.palette.color(_TEXT))
        painter.setFont(option.font)
        text = self._elision.shown(option.fontMetrics, text, rect.width())  # elided if need be
        painter.drawText(rect, alignment, text)

    def _paint_plain(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        text: str,
        alignment: int,
    ) -> None:
        """``_paint_text`` of a plain cell in five calls into Qt, its flags as ints: the text
        elided to the width is kept (``ELIDED_KEPT`` texts, dropped when the view's font
        changes)."""
        margin = self._margin if self._margin is not None else self.text_margin(option)
        x, y, width, height = cast(tuple[int, int, int, int], option.rect.getRect())
        width -= 2 * margin
        shown = self._elided.get((text, width)) or self.elided(option.fontMetrics, text, width)
        painter.setPen(option.palette.color(_TEXT))
        painter.setFont(option.font)
        painter.drawText(x + margin, y, width, height, alignment, shown)

    def elided(self, metrics: QFontMetrics, text: str, width: int) -> str:
        """``text`` elided to ``width`` in the view's font (``metrics``), kept for the next
        paint."""
        shown = self._elided.get((text, width))
        if shown is None:
            shown = self._elision.shown(metrics, text, width)
            if len(self._elided) >= ELIDED_KEPT:
                self._elided.clear()
            self._elided[(text, width)] = shown
        return shown

    def text_margin(self, option: QStyleOptionViewItem) -> int:
        """The style's horizontal text margin in an item view cell (QCommonStyle's rule)."""
        if self._margin is None:
            widget = option.widget
            style = widget.style() if widget is not None else QApplication.style()
            metric = QStyle.PixelMetric.PM_FocusFrameHMargin
            self._margin = style.pixelMetric(metric, None, widget) + 1
        return self._margin

    def _text_colour(self, option: QStyleOptionViewItem) -> QColor:
        role = (
            QPalette.ColorRole.HighlightedText
            if option.state.value & _SELECTED_BITS
            else QPalette.ColorRole.Text
        )
        return option.palette.color(role)

    def _chip_font(self, option: QStyleOptionViewItem) -> QFont:
        return self._chip_font_metrics(option)[0]

    def _chip_font_metrics(self, option: QStyleOptionViewItem) -> tuple[QFont, QFontMetrics]:
        key = option.font.key()
        made = self._fonts.get(key)
        if made is None:
            font = QFont(option.font)
            font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
            made = self._fonts[key] = (font, QFontMetrics(font))
        return made

    def _palette(self, palette: QPalette) -> bool:
        """Whether ``palette`` is dark; the colours made from it are reset when it changes."""
        key = palette.cacheKey()
        if key != self._palette_key:
            self._palette_key = key
            self._dark = is_dark(palette)
            self._chip_colours = {}
            self._note_colours = {}
            base, text = palette.color(QPalette.ColorRole.Base), palette.color(_TEXT)
            self._track = mix(base, text, 0.08)
        return self._dark

    def _chip_colour(self, status: str, palette: QPalette) -> tuple[QPen, QColor, QColor]:
        """(border pen, fill, text colour) of a chip for ``status``."""
        dark = self._palette(palette)
        made = self._chip_colours.get(status)
        if made is None:
            colour = status_colour(status, dark)
            base, text = palette.color(QPalette.ColorRole.Base), palette.color(_TEXT)
            made = self._chip_colours[status] = (
                QPen(colour, 1),
                mix(base, colour, 0.28 if dark else 0.14),
                mix(colour, text, 0.35),
            )
        return made

    def _paint_chips(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        labels: list[str],
        statuses: list[str],
    ) -> None:
        if not labels:
            return
        palette = option.palette
        font, metrics = self._chip_font_metrics(option)
        painter.setFont(font)
        x, y, width, height = cast(tuple[int, int, int, int], option.rect.getRect())
        key = (font.key(), width, height, *labels)
        laid = self._chip_layouts.get(key)
        if laid is None:  # where each chip goes and its label elided, kept by labels and size
            rects = chip_rects(QRect(0, 0, width, height), labels, metrics)
            laid = [
                (rect, chip_label(metrics, label, rect.width() - CHIP_PAD))
                for rect, label in zip(rects, labels, strict=False)
            ]
            if len(self._chip_layouts) >= ELIDED_KEPT:
                self._chip_layouts.clear()
            self._chip_layouts[key] = laid
        rects = [rect.translated(x, y) for rect, _ in laid]
        for rect, (_, label), status in zip(rects, laid, statuses, strict=False):
            pen, fill, text = self._chip_colour(status, palette)
            painter.setPen(pen)
            painter.setBrush(fill)
            painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), 4, 4)
            painter.setPen(text)
            painter.drawText(rect, _CENTRE, label)
        hidden = len(labels) - len(rects)
        if hidden > 0:
            x = rects[-1].right() + CHIP_GAP if rects else option.rect.left() + CHIP_GAP
            area = QRect(x, option.rect.top(), option.rect.right() - x, option.rect.height())
            painter.setPen(self._text_colour(option))
            painter.drawText(area, Qt.AlignmentFlag.AlignVCenter, f"+{hidden}")

    def _paint_status(
        self, painter: QPainter, option: QStyleOptionViewItem, cell: PaintCell
    ) -> None:
        rect = cast(tuple[int, int, int, int], option.rect.getRect())
        dark, colour = self._palette(option.palette), self._text_colour(option)
        self.paint_status_at(painter, rect, cell, dark, colour, option.font, option.fontMetrics)

    def paint_status_at(
        self,
        painter: QPainter,
        rect: tuple[int, int, int, int],
        cell: PaintCell,
        dark: bool,
        colour: QColor,
        font: QFont,
        metrics: QFontMetrics,
    ) -> None:
        """The status dot, then its words in ``colour`` (unless ``status_words`` is off: then
        the dot alone, centred, the words in the tooltip), in the cell at ``rect`` (x, y,
        width, height)."""
        x, y, width, height = rect
        size = 8
        centre = QRect(x, y, width, height).center()
        left = x + 6 if self.status_words else centre.x() - size // 2 + 1
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(status_colour(cell.status, dark))
        painter.drawEllipse(QRect(left, centre.y() - size // 2 + 1, size, size))
        if not self.status_words:
            return
        painter.setPen(colour)
        painter.setFont(font)
        words = width - size - 16  # right of the dot, 4 px short of the edge
        shown = self.elided(metrics, cell.text, words)
        painter.drawText(x + size + 12, y, words, height, _VCENTRE_BITS, shown)

    def _paint_latency(
        self, painter: QPainter, option: QStyleOptionViewItem, cell: PaintCell
    ) -> None:
        rect = cast(tuple[int, int, int, int], option.rect.getRect())
        selected = bool(option.state.value & _SELECTED_BITS)
        self._palette(option.palette)
        bar = latency_bar_colour(option.palette, selected)
        self.paint_latency_at(painter, rect, cell, bar, self._text_colour(option), option.font)

    def paint_latency_at(
        self,
        painter: QPainter,
        rect: tuple[int, int, int, int],
        cell: PaintCell,
        bar: QColor,
        colour: QColor,
        font: QFont,
    ) -> None:
        """The duration, right-aligned, over a thin bar along the bottom of the whole cell (at
        the default column width there is no room beside the text); the palette's colours
        made (``dark``) first."""
        x, y, width, height = rect
        left, inner = x + 6, width - 12
        filled = latency_bar_width(width, cell.fraction)
        if filled:
            track = QRect(left, y + height - 6, inner, 4)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._track)
            painter.drawRoundedRect(track, 2, 2)
            track.setWidth(filled)
            painter.setBrush(bar)
            painter.drawRoundedRect(track, 2, 2)
        painter.setPen(colour)
        painter.setFont(font)
        painter.drawText(left, y, inner, height - 4, _ALIGN_BITS[1], cell.text)

    def track_colour(self) -> QColor:
        """The latency bar's track colour, of the palette ``dark`` was last given."""
        return self._track

    def dark(self, palette: QPalette) -> bool:
        """Whether ``palette`` is dark; the colours made from it are kept until it changes."""
        return self._palette(palette)

    def _paint_header(
        self, painter: QPainter, option: QStyleOptionViewItem, cell: PaintCell
    ) -> None:
        """An attempt header: spans the row; "Attempt N · k steps", its last status, cleared.
        Each cell of the row paints the whole header clipped to itself (no ``setSpan``)."""
        option = QStyleOptionViewItem(option)
        view, cell_rect = option.widget, option.rect
        if isinstance(view, QTableView):  # the row from the first column to the right edge
            left = view.columnViewportPosition(0)
            right = max(view.viewport().width(), cell_rect.right() + 1)
            option.rect = QRect(left, cell_rect.top(), right - left, cell_rect.height())
        # Headers are not selectable (so Up/Down skip them), which Qt paints as disabled.
        option.palette.setCurrentColorGroup(QPalette.ColorGroup.Active)
        palette = option.palette
        painter.save()
        painter.setClipRect(cell_rect)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        background = mix(
            palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.07
        )
        painter.fillRect(option.rect, background)
        painter.setPen(mix(background, palette.color(QPalette.ColorRole.Text), 0.2))
        painter.drawLine(option.rect.bottomLeft(), option.rect.bottomRight())
        title, _, rest = cell.text.partition(" · ")
        rest = rest.removesuffix(" · cleared").removesuffix("cleared")
        bold = QFont(option.font)
        bold.setBold(True)
        x = option.rect.left() + 8
        area = option.rect
        painter.setFont(bold)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawText(
            QRect(x, area.top(), area.width(), area.height()), Qt.AlignmentFlag.AlignVCenter, title
        )
        x += QFontMetrics(bold).horizontalAdvance(title) + 8
        if rest:
            painter.setFont(option.font)
            painter.setPen(mix(palette.color(QPalette.ColorRole.Text), background, 0.4))
            painter.drawText(
                QRect(x, area.top(), area.width(), area.height()),
                Qt.AlignmentFlag.AlignVCenter,
                f"· {rest}",
            )
            x += QFontMetrics(option.font).horizontalAdvance(f"· {rest}") + 8
        status = cell.status
        labels = [words(status)]
        statuses = [status]
        if cell.cleared:
            labels.append("cleared")
            statuses.append("cleared")
        chips = QStyleOptionViewItem(option)
        chips.rect = QRect(x - CHIP_GAP, area.top(), area.right() - x, area.height())
        self._paint_chips(painter, chips, labels, statuses)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        hint = super().sizeHint(option, index)
        hint.setHeight(QFontMetrics(option.font).height() + 10)
        return hint
