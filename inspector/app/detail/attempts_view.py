"""Attempts side by side, a centre tab: one column per attempt of the turn (its candidate, its
verdicts with reasons, the feedback that followed) and a ``★ Kept answer`` column (what the
user got); below them the three views of one turn (DESIGN §4): what the model saw on the final
call, the persisted transcript, and what a streaming UI showed and then cleared.

As many attempts as fit side by side without horizontal scrolling (columns of at least
``COLUMN_MIN`` px) make a page, "attempts 4–6 of 12"; Left/Right select the previous/next
attempt, PgUp/PgDn/Home/End and the ◀ ▶ buttons move a page. Only the page's columns exist as
widgets, so a run of 10,000 attempts costs what three do. A click on a column (or a key that
selects an attempt) asks for the attempt's last step (``stepRequested``); the window shows it
in the timeline and the Step dock, and tells the view which step is selected
(``set_current_step``), so the page follows a streaming run the way the timeline does.

Events only mark the view stale; it re-renders at most every ``REFRESH_MS``, and only while it
has a visible region (``isVisible()`` is true for a tab or dock behind another). Each render
runs in an event-loop turn of its own, apart from the Step detail's (``in_own_turn``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPaintEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.app.detail.attempt_html import (
    column_html,
    column_title,
    final_call_html,
    kept_html,
    streamed_html,
    transcript_html,
)
from inspector.app.detail.attempt_index import AttemptIndex
from inspector.app.detail.chat_bubbles import ChatView, note
from inspector.app.detail.turn_views import TurnViews
from inspector.app.theme import is_dark
from inspector.app.widgets.loop_turns import in_own_turn
from inspector.app.widgets.throttle import Throttle
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.records import step_kind
from inspector.reports.attempt_columns import attempt_column, kept_column, page_label, page_start

REFRESH_MS = 100
# A render "at the next event-loop turn": a 1 ms timer, not 0 — Qt 6 posts a 0 ms single shot
# as an event, delivered before any timer is due, so the turn that posted it, the render and
# the render after it would hold the loop as one pause.
NEXT_TURN_MS = 1
COLUMN_MIN = 160  # px: a page holds as many attempt columns as fit at this width, kept included
COLUMN_SPACING = 6
STREAMED_ATTEMPTS = 20  # attempts whose candidates the "streaming UI showed" view lists
PAGE_KEYS = "Left/Right: attempt · PgUp/PgDn: page · click: its step"
SHORT_KEYS = "←/→ attempt · PgUp/PgDn page"  # where PAGE_KEYS does not fit
LOADING = "loading the run's steps…"  # a long run opened light: its attempts come with them


class Column(QFrame):
    """A titled rich-text column that wraps its text (never a horizontal scroll bar); a click
    anywhere on it emits ``clicked``."""

    clicked = Signal()

    def __init__(self, parent: QWidget, title: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("attemptColumn")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.title = QLabel(title, self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.body = ChatView(self)
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the view keeps the paging keys
        self.body.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.body, 1)
        for widget in (self, self.title, self.body.viewport()):
            widget.installEventFilter(self)
        self.selected = False

    def set_selected(self, selected: bool) -> None:
        if selected != self.selected:
            self.selected = selected
            self.setStyleSheet(
                "QFrame#attemptColumn { border: 2px solid palette(highlight); }" if selected else ""
            )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonPress:
            self.clicked.emit()
        return False  # text selection and links still work


class _KeysHint(QLabel):
    """The paging keys in the room left beside the page: ``SHORT_KEYS`` where they do not fit
    (at 1024×700), elided with "…" when narrower than those (a right-aligned ``QLabel`` cuts
    its text's start: "mpt · PgUp/PgDn: page…"); the whole text is its tooltip."""

    def __init__(self, text: str, parent: QWidget) -> None:
        super().__init__(text, parent)
        self._whole = text
        self.setToolTip(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        metrics, width = self.fontMetrics(), self.contentsRect().width()
        whole = self._whole
        if metrics.horizontalAdvance(whole) > width:
            whole = SHORT_KEYS
        shown = metrics.elidedText(whole, Qt.TextElideMode.ElideRight, width)
        if shown != self.text():
            self.setText(shown)


class AttemptsView(QWidget):
    stepRequested = Signal(int)  # the last step of the attempt clicked or selected by key

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attemptsView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._run = LiveRun()
        self._loading = False  # the run shown is a light one (show_run)
        self._index = AttemptIndex()
        self._columns: list[Column] = []  # the page's, bound to attempts first, first + 1...
        # Per column, what it shows: (index generation, attempt number, its version, dark).
        self._bound: list[tuple[int, int, int, bool] | None] = []
        self._first = 0  # the page's first attempt (its position in the index)
        self._per_page = 1
        self._selected: int | None = None  # the selected attempt's position
        self._wanted: int | None = None  # a step selected elsewhere, resolved at the next render

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(self._page_bar())
        layout.addWidget(self._panes(), 1)

        self._timer = Throttle(
            self, REFRESH_MS, lambda: in_own_turn(self, self._refresh_if_visible)
        )
        self._stale = False  # something changed while hidden: refresh when shown
        self._catch_up = False  # a refresh is scheduled for the next event-loop turn
        self._views_due = False  # the three views are to render at the next event-loop turn
        self.refresh()

    def _page_bar(self) -> QHBoxLayout:
        """◀ attempts 4–6 of 12 ▶ and, in the room left, the paging keys."""
        self.page = QLabel(self)
        self.page.setObjectName("attemptsPage")
        self.page.setToolTip(PAGE_KEYS)
        self.earlier, self.later = QToolButton(self), QToolButton(self)
        for button, text, tip, move in (
            (self.earlier, "◀", "Earlier attempts (PgUp)", -1),
            (self.later, "▶", "Later attempts (PgDn)", 1),
        ):
            button.setText(text)
            button.setToolTip(tip)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, m=move: self.move_page(m))
        keys = self.keys = _KeysHint(PAGE_KEYS, self)
        keys.setEnabled(False)  # drawn in the palette's muted text colour
        keys.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        keys.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.earlier)
        bar.addWidget(self.page)
        bar.addWidget(self.later)
        bar.addWidget(keys, 1)  # takes what room is left; said in the page's tooltip too
        return bar

    def _panes(self) -> QSplitter:
        """The page's columns and the kept answer above, the three views of the turn below."""
        self._strip = QWidget(self)
        self._strip.installEventFilter(self)  # its resizes: how many columns fit
        self._strip_layout = QHBoxLayout(self._strip)
        self._strip_layout.setContentsMargins(0, 0, 0, 0)
        self._strip_layout.setSpacing(COLUMN_SPACING)
        self.kept = Column(self._strip, "<b>★ Kept answer</b>")
        self._strip_layout.addWidget(self.kept, 1)

        self.final_call = Column(self, "<b>Model saw on the final call</b>")
        self.transcript = Column(self, "<b>Persisted transcript</b>")
        self.streamed = Column(self, "<b>Streaming UI showed, then cleared</b>")
        views = self.views = TurnViews(
            self,
            [
                (self.final_call, "Final call"),
                (self.transcript, "Transcript"),
                (self.streamed, "Streamed, cleared"),
            ],
        )
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self._strip)
        split.addWidget(views)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 1)
        return split

    # ---- what the window calls -----------------------------------------------------------------

    def show_run(
        self, run: LiveRun, index: AttemptIndex | None = None, current: int | None = None
    ) -> None:
        """Shows ``run``'s attempts; a run opened light (``LiveRun.light``) shows none and says
        it is loading, until the window shows it again with its full steps. ``index``: the
        ``AttemptIndex`` of ``run.steps``, built on a worker thread (a long stored run's);
        ``current``: the step selected elsewhere, whose attempt the first render selects."""
        self._loading = run.light
        self._run = LiveRun() if run.light else run
        self._index = AttemptIndex() if index is None or run.light else index
        self._bound = [None] * len(self._columns)
        self._first, self._selected = 0, None
        self._wanted = None if run.light else current
        self._timer.stop()
        self._stale = True  # rendered at the next event-loop turn, not inside the caller's
        if self.on_screen() and not self._catch_up:
            self._soon()

    def on_event(self, event: Event) -> None:
        index = getattr(event, "index", None)
        live = self._run.step(index) if isinstance(index, int) else None
        if live is not None:
            self._index.step_changed(live)
        self._later()

    def set_current_step(self, index: int) -> None:
        """Step ``index`` is selected elsewhere (the timeline): its attempt is selected and
        shown — now when the view is on screen and knows the attempt, else at the next render."""
        live = self._run.step(index)
        position = self._index.position_of(live.attempt) if live is not None else None
        if position is not None and self.on_screen():
            self._wanted = None
            if position != self._selected:
                self._selected = position
                self._render_page()
            return
        self._wanted = index
        self._later()

    # ---- rendering only what is on screen ------------------------------------------------------

    def on_screen(self) -> bool:
        """Shown and not covered: ``isVisible()`` alone is true for a dock tabbed behind
        another."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def _later(self) -> None:
        if not self.on_screen():  # hidden, or a tab behind another: nobody sees a re-render
            self._stale = True
        else:
            self._timer.poke()

    def _refresh_if_visible(self) -> None:
        if self.on_screen():
            self.refresh()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._stale and not self._catch_up:  # uncovered (its dock tab raised)
            self._soon()

    def changeEvent(self, event: QEvent) -> None:
        """A light/dark palette change: the columns and views are rendered again in its
        colours (each column's binding carries the palette it was rendered in)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._later()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self._fits() != self._per_page:
            self._refresh_if_visible()  # narrower or wider: the selection stays in view
        return False

    def _soon(self) -> None:
        """A refresh at the next event-loop turn (the timer keeps its REFRESH_MS interval)."""
        self._catch_up = True

        def refresh() -> None:
            self._catch_up = False
            self._refresh_if_visible()

        QTimer.singleShot(NEXT_TURN_MS, self, lambda: in_own_turn(self, refresh))

    @property
    def attempt_columns(self) -> list[Column]:
        """The attempt columns shown (the kept answer apart)."""
        return [c for c in self._columns if not c.isHidden()]

    @property
    def selected_attempt(self) -> int | None:
        """The selected attempt's number (None: none selected)."""
        if self._selected is None or self._selected >= len(self._index):
            return None
        return self._index.span(self._selected).number

    def refresh(self) -> None:
        self._stale = False
        if self._index.update(self._run.steps):
            self._soon()  # more steps to classify: the rest in the next slices
        if self._wanted is not None:
            live = self._run.step(self._wanted)
            position = self._index.position_of(live.attempt) if live is not None else None
            if position is not None:
                self._wanted = None
                self._selected = position
        self._render_page()
        dark = is_dark(self.palette())
        if self._loading:
            self.page.setText(LOADING)
            self.kept.body.set_body(note(LOADING[0].upper() + LOADING[1:], dark))
        else:
            self.kept.body.set_body(kept_html(kept_column(self._run.record), dark))
        if not self._views_due:  # the three views in the next event-loop turn: two short
            self._views_due = True  # pauses rather than one long one
            QTimer.singleShot(NEXT_TURN_MS, self, lambda: in_own_turn(self, self._render_views))

    def _render_views(self) -> None:
        self._views_due = False
        if not self.on_screen():
            self._stale = True  # rendered with the rest when it is seen again
            return
        run, dark = self._run, is_dark(self.palette())
        last = run.steps[self._index.span(-1).end - 1].as_step() if len(self._index) else None
        self.final_call.body.set_body(final_call_html(last, dark))
        self.transcript.body.set_body(transcript_html(run.record, dark))
        self.streamed.body.set_body(self._streamed_html(dark))

    # ---- the page ------------------------------------------------------------------------------

    def _fits(self) -> int:
        """Attempt columns that fit beside the kept answer at ``COLUMN_MIN`` px each."""
        width = self._strip.width()
        return max(1, (width + COLUMN_SPACING) // (COLUMN_MIN + COLUMN_SPACING) - 1)

    def move_page(self, pages: int) -> None:
        """A page earlier (-1) or later (+1); the selection moves with it."""
        total = len(self._index)
        first = max(0, min(self._first + pages * self._per_page, total - self._per_page))
        if self._selected is not None:
            self._selected = max(0, min(total - 1, self._selected + first - self._first))
        self._first = first
        self._pick(self._selected)

    def select(self, position: int) -> None:
        """Selects the attempt at ``position`` (0-based, clamped), shows it, asks for its step."""
        total = len(self._index)
        if total:
            self._pick(max(0, min(total - 1, position)))

    def _pick(self, position: int | None) -> None:
        self._selected, self._wanted = position, None
        if self.on_screen():
            self._render_page()
        else:
            self._stale = True
        if position is not None:
            span = self._index.span(position)
            self.stepRequested.emit(self._run.steps[span.end - 1].index)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, selected = Qt.Key(event.key()), self._selected
        first, per_page = self._first, self._per_page
        moves = {
            Qt.Key.Key_Left: (first + per_page if selected is None else selected) - 1,
            Qt.Key.Key_Right: (first - 1 if selected is None else selected) + 1,
            Qt.Key.Key_Home: 0,
            Qt.Key.Key_End: len(self._index) - 1,
        }
        if key in moves:
            self.select(moves[key])
        elif key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            self.move_page(-1 if key == Qt.Key.Key_PageUp else 1)
        else:
            super().keyPressEvent(event)

    def _render_page(self) -> None:
        total = len(self._index)
        self._per_page = per_page = self._fits()
        self._first = page_start(self._first, per_page, total, self._selected)
        shown = min(per_page, total - self._first)
        self.page.setText(page_label(self._first, shown, total))
        self.earlier.setEnabled(self._first > 0)
        self.later.setEnabled(self._first + shown < total)
        while len(self._columns) < shown:  # only the page's columns exist
            column = Column(self._strip)
            column.clicked.connect(lambda c=column: self._clicked(c))
            self._strip_layout.insertWidget(len(self._columns), column, 1)
            self._columns.append(column)
            self._bound.append(None)
        while len(self._columns) > max(shown, per_page):
            self._columns.pop().deleteLater()
            self._bound.pop()
        for slot, column in enumerate(self._columns):
            column.setVisible(slot < shown)
        self._strip_layout.activate()  # final widths first: text laid out once, scrolled to top
        dark = is_dark(self.palette())
        for slot, column in enumerate(self._columns[:shown]):
            position = self._first + slot
            span = self._index.span(position)
            key = (self._index.generation, span.number, span.version, dark)
            bound = self._bound[slot]
            if bound != key:
                self._bound[slot] = key
                last = self._run.steps[span.end - 1].as_step()
                found = attempt_column(last, span.tool_steps, span.tool_count, span.cleared)
                column.title.setText(column_title(found, dark))
                column.body.set_body(column_html(found, dark))
                if bound is None or bound[1] != span.number:  # another attempt: from its top
                    column.body.verticalScrollBar().setValue(0)
            column.set_selected(position == self._selected)

    def _clicked(self, column: Column) -> None:
        slot = self._columns.index(column)
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        self.select(self._first + slot)

    def _streamed_html(self, dark: bool) -> str:
        """The run's first tool steps and the candidates of its last ``STREAMED_ATTEMPTS``
        attempts (all of them, for any run a person reads through)."""
        steps, index = self._run.steps, self._index
        shown = [index.span(p) for p in range(max(0, len(index) - STREAMED_ATTEMPTS), len(index))]
        tools_shown = sum(s.tool_count for s in shown)
        # The steps before the shown attempts, less their tool steps (counted once each).
        earlier = shown[0].start - (index.tool_total - tools_shown) if shown else 0
        picked = {s.index: s for s in index.first_tools}
        for span in shown:
            for position in (*span.candidates, span.end - 1):
                step = steps[position].as_step()
                picked[step.index] = step
        selection = [picked[i] for i in sorted(picked)]
        tools = index.tool_total + sum(
            1 for s in shown if step_kind(steps[s.end - 1].as_step()) == "tool call"
        )
        return streamed_html(selection, tools, earlier, self._run.record, dark)
