"""A label for text that changes while a run streams (a step's title, the summaries, the
outcome header's lines, the status bar's clock and tokens).

A ``QLabel``'s ``setText`` calls ``updateGeometry()``: every layout up to the main window is
invalidated and the whole window laid out again, once per follow of a streaming run. A
``StatusLine``'s size does not follow its text, so a new text only repaints it (``update()``);
it asks for a new layout only when its font or style changes, ``grow=True`` when its text gets
wider than it ever was, ``wrap=True`` when a new text takes another number of lines.

Unwrapped, it paints its text on one line of a height fixed by the font, elided with "…" when
it does not fit, the whole text then its tooltip. Plain text, or rich text
(``Qt::mightBeRichText``: tags, coloured spans) drawn as ``QLabel`` draws it, in the palette's
text colour; the text is its accessible name, in plain words, and it is announced as static
text as a ``QLabel`` is (``_StaticText``). No links, no selection.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QAccessible,
    QFontMetricsF,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextDocument,
    QTextOption,
)
from PySide6.QtGui import Qt as GuiQt  # Qt.mightBeRichText is QtGui's
from PySide6.QtWidgets import QAccessibleWidget, QSizePolicy, QToolTip, QWidget

ELLIPSIS = "…"
GROW_CHARS = 3  # ``grow``: its width grows in steps of this many average characters
MIN_CHARS = 8  # the narrowest it lays out (``grow=False``), in average characters


class _StaticText(QAccessibleWidget):
    """A ``StatusLine`` to assistive technology: static text named by its plain words (a plain
    ``QWidget`` is announced with a generic role)."""

    def __init__(self, line: StatusLine) -> None:
        super().__init__(line, QAccessible.Role.StaticText, "")


def _accessible(key: str, obj: object) -> QAccessibleWidget | None:
    return _StaticText(obj) if isinstance(obj, StatusLine) else None


_factory_installed = False


def _install_accessible() -> None:
    """Once per process, before the first ``StatusLine`` is asked for its interface."""
    global _factory_installed
    if not _factory_installed:
        QAccessible.installFactory(_accessible)
        _factory_installed = True


class StatusLine(QWidget):
    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        *,
        grow: bool = False,
        wrap: bool = False,
        plain: bool = False,
    ) -> None:
        """``grow``: wide enough for the widest text it has shown (a status bar field: its
        width changes, and the layout runs, only when a text is wider than any before);
        else it takes the width its layout gives it (``QSizePolicy.Ignored``). ``wrap``:
        word-wrapped on as many lines as it takes, the layout asked again only
        when a new text takes another number of lines. ``plain``: never read as rich text."""
        super().__init__(parent)
        _install_accessible()
        self._wrap = wrap
        self._plain_only = plain
        self._text = ""
        self._plain = ""
        self._is_rich = False
        self._document: QTextDocument | None = None  # of a rich text, made by ``setText``
        self._grow = grow
        self._width = 0  # ``grow``: of the widest text shown
        self._elided = False
        horizontal = QSizePolicy.Policy.Preferred if grow else QSizePolicy.Policy.Ignored
        policy = QSizePolicy(
            horizontal, QSizePolicy.Policy.Preferred if wrap else QSizePolicy.Policy.Fixed
        )
        policy.setHeightForWidth(wrap)
        self.setSizePolicy(policy)
        self.setText(text)

    # -- QLabel's interface ---------------------------------------------------------------

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        if text == self._text:
            return
        height = self.heightForWidth(self.width()) if self._wrap else 0  # of the old text
        self._text = text
        self._document = None
        self._is_rich = not self._plain_only and GuiQt.mightBeRichText(text)
        if self._is_rich:
            self._plain = self._rich().toPlainText()
        else:
            self._plain = text
        self.setAccessibleName(self._plain)
        if self._grow:
            width = self._text_width()
            if width > self._width:
                self._width = self._rounded(width)
                self.updateGeometry()
        elif self._wrap and self.heightForWidth(self.width()) != height:
            self.updateGeometry()
        self.update()

    def plain_text(self) -> str:
        return self._plain

    def is_elided(self) -> bool:
        """Whether the last paint cut the text (its tooltip is then the whole text)."""
        return self._elided

    # -- size -----------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        margins = self.contentsMargins()
        metrics = self.fontMetrics()
        width = self._width if self._grow else metrics.averageCharWidth() * MIN_CHARS
        height = max(metrics.height(), metrics.lineSpacing())
        return QSize(
            width + margins.left() + margins.right(), height + margins.top() + margins.bottom()
        )

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def hasHeightForWidth(self) -> bool:
        return self._wrap

    def heightForWidth(self, width: int) -> int:
        margins = self.contentsMargins()
        if not self._wrap:
            return self.sizeHint().height()
        inner = max(1, width - margins.left() - margins.right())
        if self._is_rich:
            document = self._rich()
            document.setTextWidth(inner)
            return int(document.size().height() + 0.99) + margins.top() + margins.bottom()
        flags = int(Qt.TextFlag.TextWordWrap)
        lines = self.fontMetrics().boundingRect(QRect(0, 0, inner, 1 << 20), flags, self._plain)
        line = self.fontMetrics().height()
        return max(line, lines.height()) + margins.top() + margins.bottom()

    def changeEvent(self, event: QEvent) -> None:
        """A new font or style: a new size (the one ``updateGeometry`` it calls)."""
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._document = None
            if self._grow:
                self._width = self._rounded(self._text_width())
            self.updateGeometry()
            self.update()
        elif event.type() == QEvent.Type.PaletteChange:
            self.update()

    # -- painting -------------------------------------------------------------------------

    def _rounded(self, width: int) -> int:
        """``width`` up to whole ``GROW_CHARS`` (a figure's next digits fit, mostly)."""
        step = max(1, self.fontMetrics().averageCharWidth() * GROW_CHARS)
        return -(-width // step) * step

    def _text_width(self) -> int:
        if not self._is_rich:  # unrounded: whole pixels left "0 in · 0 out toke…" 1 px short
            return math.ceil(QFontMetricsF(self.font()).horizontalAdvance(self._text)) + 1
        return int(self._rich().idealWidth()) + 1

    def _rich(self) -> QTextDocument:
        if self._document is None:
            document = QTextDocument()  # no parent: freed with the text it shows
            document.setDocumentMargin(0)
            document.setDefaultFont(self.font())
            option = QTextOption()
            option.setWrapMode(
                QTextOption.WrapMode.WordWrap if self._wrap else QTextOption.WrapMode.NoWrap
            )
            document.setDefaultTextOption(option)
            document.setHtml(self._text)
            self._document = document
        return self._document

    def paintEvent(self, _event: QPaintEvent) -> None:
        area = self.contentsRect()
        painter = QPainter(self)
        colour = self.palette().color(self.foregroundRole())
        painter.setPen(colour)
        if self._wrap and self._is_rich:
            self._rich().setTextWidth(area.width())
            self._paint_rich(painter, area)
            return
        if self._wrap:
            align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
            painter.drawText(area, int(align) | int(Qt.TextFlag.TextWordWrap), self._plain)
            self._elided = False
            return
        if not self._is_rich:
            metrics = self.fontMetrics()
            shown = metrics.elidedText(self._text, Qt.TextElideMode.ElideRight, area.width())
            self._elided = shown != self._text
            align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(area, int(align), shown)
            return
        self._paint_rich(painter, area)

    def _paint_rich(self, painter: QPainter, area: QRect) -> None:
        document = self._rich()
        metrics = self.fontMetrics()
        self._elided = not self._wrap and document.idealWidth() > area.width()
        ellipsis = metrics.horizontalAdvance(ELLIPSIS) if self._elided else 0
        top = area.top() + max(0, (area.height() - int(document.size().height())) // 2)
        painter.save()
        painter.translate(QPoint(area.left(), top))
        clip = QRect(0, 0, max(0, area.width() - ellipsis), area.height())
        painter.setClipRect(clip)
        palette = QPalette(self.palette())
        palette.setColor(QPalette.ColorRole.Text, palette.color(self.foregroundRole()))
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette = palette
        context.clip = clip.toRectF()
        document.documentLayout().draw(painter, context)
        painter.restore()
        if self._elided:
            align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(area, int(align), ELLIPSIS)

    def event(self, event: QEvent) -> bool:
        """The whole text as the tooltip when it is cut (a tooltip of its own otherwise)."""
        if event.type() == QEvent.Type.ToolTip and self._elided and not self.toolTip():
            assert isinstance(event, QHelpEvent)
            QToolTip.showText(event.globalPos(), self._plain, self)
            return True
        return super().event(event)
