"""The outcome header above the timeline: what the turn's user got (the answer, the fallback
value or the error: wrapped, three lines at most until **Show all**, with **Copy**), how the
turn ended in words, the attempts and steps against their budgets, the tokens and the cost.

The words are ``reports/turn_outcome.py``'s. While a run streams the header is redrawn at most
every ``REDRAW_MS`` (each redraw O(1): the tokens are summed as steps finish); the cost is looked
up off the UI thread (the price table loads in ~0.2 s the first time) and shown when it comes.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from PySide6.QtCore import QEvent, QObject, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from inspector.app.theme import is_dark, mix, status_colour
from inspector.app.widgets.status_line import StatusLine
from inspector.app.widgets.throttle import Throttle
from inspector.core.events import Event, RunFinished, StepFinished
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Usage
from inspector.reports.run_text import usage_so_far
from inspector.reports.turn_outcome import (
    EMPTY,
    NOT_PRICED,
    Cost,
    TurnOutcome,
    turn_outcome,
)
from inspector.sweeps.cost import run_cost

REDRAW_MS = 50
COLLAPSED_LINES = 3
EXPANDED_LINES = 14
# The theme colour of a run's status (and of a streaming run).
_STATUS_COLOURS = {
    "succeeded": "success",
    "fallback": "empty",
    "failed": "fail",
    "error": "error",
    "running": "pending",
}
_PRICER: ThreadPoolExecutor | None = None
PriceKey = tuple[str, str, int, int]


def _pricer() -> ThreadPoolExecutor:
    """The pricing thread; the price table is loaded on it as soon as it starts, so the first
    run's cost is there about when the run ends."""
    global _PRICER
    if _PRICER is None:
        _PRICER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="price")
        _PRICER.submit(run_cost, "gpt-4o-mini", "openai", 1, 1)
    return _PRICER


class OutcomeHeader(QFrame):
    _priced = Signal(object, object)  # (PriceKey, cost): from the pricing thread

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("outcomeHeader")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.outcome: TurnOutcome = EMPTY
        self._run = LiveRun()
        self._tokens = Usage()  # of the run streaming: summed as its steps finish
        self._costs: dict[PriceKey, Cost] = {}
        self._expanded = False
        self._painted: tuple[str, bool, str] | None = None
        self._timer = Throttle(self, REDRAW_MS, self.refresh)
        self._priced.connect(self._on_priced)
        _pricer()

        self.strip = QFrame(self)
        self.strip.setFixedWidth(4)
        self.strip.setAutoFillBackground(True)
        self.badge = QLabel(self)
        self.badge.setObjectName("outcomeBadge")
        # Redrawn while a run streams: relaid out only when a text takes another number of
        # lines, not at each redraw (widgets/status_line.py).
        self.ended = StatusLine("", self, wrap=True, plain=True)
        self.ended.setObjectName("outcomeEnded")
        self.facts = StatusLine("", self, wrap=True, plain=True)
        self.facts.setObjectName("outcomeFacts")
        self._make_answer()
        self._lay_out()
        self.refresh()

    def _make_answer(self) -> None:
        """The answer's label, its wrapped text in a scroll area, Show all and Copy."""
        self.answer_label = QLabel(self)
        self.answer_label.setObjectName("outcomeAnswerLabel")
        self.answer_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.answer = QLabel()
        self.answer.setObjectName("outcomeAnswer")
        self.answer.setTextFormat(Qt.TextFormat.PlainText)
        self.answer.setWordWrap(True)
        self.answer.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer_area = QScrollArea(self)
        self.answer_area.setWidget(self.answer)
        self.answer_area.setWidgetResizable(True)
        self.answer_area.setFrameShape(QFrame.Shape.NoFrame)
        self.answer_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.answer_area.viewport().setAutoFillBackground(False)
        self.answer.setAutoFillBackground(False)
        self.answer_area.installEventFilter(self)  # the answer is fitted to its width
        self._fitted_width = -1
        self.show_all = QPushButton("Show all", self)
        self.show_all.setObjectName("outcomeShowAll")
        self.show_all.setCheckable(True)
        self.show_all.toggled.connect(self._set_expanded)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setObjectName("outcomeCopy")
        self.copy_button.setToolTip("Copy all of it to the clipboard")
        self.copy_button.clicked.connect(self.copy_answer)
        for button in (self.show_all, self.copy_button):
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.ended, 1)
        answer = QHBoxLayout()
        answer.setSpacing(8)
        answer.addWidget(self.answer_label, 0, Qt.AlignmentFlag.AlignTop)
        answer.addWidget(self.answer_area, 1)
        buttons = QVBoxLayout()
        buttons.setSpacing(0)
        buttons.addWidget(self.show_all)
        buttons.addWidget(self.copy_button)
        buttons.addStretch(1)
        answer.addLayout(buttons)
        content = QVBoxLayout()
        content.setContentsMargins(6, 4, 4, 4)
        content.setSpacing(2)
        content.addLayout(top)
        content.addLayout(answer)
        content.addWidget(self.facts)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.strip)
        outer.addLayout(content, 1)

    # -- interface ------------------------------------------------------------------------

    def show_run(self, run: LiveRun) -> None:
        self._run = run
        self._tokens = usage_so_far(run) if run.record is None else Usage()
        self._timer.stop()
        self.show_all.setChecked(False)
        self.refresh()

    def on_event(self, event: Event) -> None:
        """Call after the run applied ``event``: redrawn now at the run's end, else within
        ``REDRAW_MS``."""
        if isinstance(event, StepFinished) and event.step.response is not None:
            self._tokens = self._tokens + event.step.response.usage
        if isinstance(event, RunFinished):
            self._timer.stop()
            self.refresh()
        else:
            self._timer.poke()

    @property
    def pricing(self) -> bool:
        """The finished run shown waits for its cost (``cost …``) from the pricing thread."""
        record = self._run.record
        return record is not None and self._costs.get(_price_key(record)) is NOT_PRICED

    def copy_answer(self) -> None:
        QGuiApplication.clipboard().setText(self.outcome.answer)

    def refresh(self) -> None:
        run = self._run
        record = run.record
        if record is not None:
            outcome = turn_outcome(run, cost=self._cost(record))
        elif run.header is not None or run.steps:
            outcome = turn_outcome(run, self._tokens)
        else:
            outcome = EMPTY
        self.outcome = outcome
        self.setVisible(outcome is not EMPTY)
        self._paint_status(outcome.status)
        self.badge.setText(f"<b>{outcome.headline}</b>")
        self.ended.setText(outcome.ended)
        self.facts.setText(outcome.facts_line)
        self.answer_label.setText(f"<b>{outcome.answer_label}</b>")
        has_answer = bool(outcome.answer)
        for widget in (self.answer_label, self.answer_area, self.copy_button):
            widget.setVisible(has_answer)
        self._fit_answer()

    def changeEvent(self, event: QEvent) -> None:
        """A light/dark palette change repaints the tint, strip and badge in its colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_status(self.outcome.status)  # a no-op for its own setPalette calls

    # -- internals ------------------------------------------------------------------------

    def _cost(self, record: RunRecord) -> Cost:
        """The run's cost if known; else it is looked up on the pricing thread (NOT_PRICED
        until ``_on_priced``)."""
        key = _price_key(record)
        if key not in self._costs:
            self._costs[key] = NOT_PRICED
            future = _pricer().submit(run_cost, *key)
            future.add_done_callback(partial(self._priced_in_thread, key))
        return self._costs[key]

    def _priced_in_thread(self, key: PriceKey, done: Future[float | None]) -> None:
        try:
            cost = done.result()
        except Exception:  # a broken price table: the cost stays unknown, never $0
            cost = None
        # Queued to the UI thread; RuntimeError: the header was deleted meanwhile (window closed).
        with contextlib.suppress(RuntimeError):
            self._priced.emit(key, cost)

    def _on_priced(self, key: PriceKey, cost: float | None) -> None:
        self._costs[key] = cost
        record = self._run.record
        if record is not None and _price_key(record) == key:
            self.refresh()

    def _paint_status(self, status: str) -> None:
        """The header tinted, its strip and badge in the status colour (set again only when
        the status or the light/dark palette changed: a palette change repolishes children)."""
        palette = self.palette()
        dark = is_dark(palette)
        painted = (status, dark, self.outcome.answer_kind)
        if painted == self._painted:
            return
        self._painted = painted
        colour = status_colour(_STATUS_COLOURS.get(status, "cancelled"), dark)
        base = palette.color(QPalette.ColorRole.Base)
        own = QPalette(palette)
        own.setColor(QPalette.ColorRole.Window, mix(base, colour, 0.07))
        self.setPalette(own)
        strip = QPalette(palette)
        strip.setColor(QPalette.ColorRole.Window, colour)
        self.strip.setPalette(strip)
        badge = QPalette(palette)
        text = QColor(palette.color(QPalette.ColorRole.WindowText))
        badge.setColor(QPalette.ColorRole.WindowText, mix(colour, text, 0.2))
        self.badge.setPalette(badge)
        answer = QPalette(palette)
        if self.outcome.answer_kind == "error":
            answer.setColor(QPalette.ColorRole.WindowText, colour)
        self.answer.setPalette(answer)

    def _set_expanded(self, expanded: bool) -> None:
        self._expanded = expanded
        self.show_all.setText("Show less" if expanded else "Show all")
        self._fit_answer()

    def _fit_answer(self) -> None:
        """The answer in at most ``COLLAPSED_LINES`` lines (cut with "…" and a **Show all**),
        or all of it in up to ``EXPANDED_LINES`` lines that scroll."""
        text = self.outcome.answer
        width = max(80, self.answer_area.width() - 4)
        self._fitted_width = self.answer_area.width()
        metrics = self.answer.fontMetrics()
        line = metrics.lineSpacing()
        if self._expanded:
            self.answer.setText(text)
            self.show_all.setVisible(True)
            height = self.answer.heightForWidth(width)
            self.answer_area.setFixedHeight(min(max(line, height), EXPANDED_LINES * line) + 2)
            return
        shown, cut = fit_lines(self.outcome.answer_brief or text, width, COLLAPSED_LINES, metrics)
        self.answer.setText(shown)
        self.show_all.setVisible(cut)
        height = self.answer.heightForWidth(width)
        self.answer_area.setFixedHeight(min(max(line, height), COLLAPSED_LINES * line) + 2)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.answer_area
            and event.type() == QEvent.Type.Resize
            and self.answer_area.width() != self._fitted_width
        ):
            self._fit_answer()
        return super().eventFilter(watched, event)


def _price_key(record: RunRecord) -> PriceKey:
    return (record.model, record.provider, record.usage.input_tokens, record.usage.output_tokens)


def fit_lines(text: str, width: int, lines: int, metrics: QFontMetrics) -> tuple[str, bool]:
    """``text`` as it fits in ``lines`` word-wrapped lines of ``width`` pixels: (the text, or
    its start and "…"; whether it was cut)."""
    limit = lines * metrics.lineSpacing()
    wrap = int(Qt.TextFlag.TextWordWrap)

    def fits(candidate: str) -> bool:
        bound = metrics.boundingRect(QRect(0, 0, width, 1_000_000), wrap, candidate)
        return bound.height() <= limit

    per_line = max(1, width // max(1, metrics.averageCharWidth()))
    if len(text) <= lines * per_line * 2 and text.count("\n") < lines and fits(text):
        return text, False
    cut = "\n".join(text.splitlines()[:lines])[: lines * per_line]
    while cut and not fits(cut + " …"):
        cut = cut[: int(len(cut) * 0.9)]
    return cut.rstrip() + " …", True
