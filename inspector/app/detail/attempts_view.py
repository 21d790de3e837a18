"""Attempts side by side: one column per attempt of the turn (its candidate output, its
verdicts, the feedback that followed), then the kept answer; below them the three views of one
turn (DESIGN §4): what the model saw on the final call, the persisted transcript, and what a
streaming UI showed and then cleared.

Events only mark the view stale; it re-renders at most every ``REFRESH_MS``, so a fast stream
costs one render per interval, not one per token — and only while it is on screen. A render
costs the same at any length of run: an ``AttemptIndex`` keeps where each attempt is, and only
the attempt columns scrolled into view are built (a run of 10,000 attempts has ~6 columns).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPaintEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.app.detail.attempt_index import TOOL_STEPS_SHOWN, AttemptIndex
from inspector.app.detail.chat_bubbles import (
    ChatView,
    bubble,
    heading,
    messages_html,
    muted,
    note,
    pre_text,
    tag,
)
from inspector.app.theme import is_dark, status_colour
from inspector.app.widgets.json_view import json_html
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Step, step_kind
from inspector.reports.labels import verdict_label, words

REFRESH_MS = 100
COLUMN_WIDTH = 300
COLUMN_SPACING = 6
POOL_MIN = 4  # attempt columns rendered at least (more when the view is wider)
STREAMED_ATTEMPTS = 20  # attempts whose candidates the "streaming UI showed" view lists
STREAMING_TAIL = 2_000  # characters of a streaming candidate shown until it finishes


def group_attempts(steps: Sequence[Step]) -> list[tuple[int, list[Step]]]:
    """Steps by attempt, in order (an attempt's steps are contiguous)."""
    groups: list[tuple[int, list[Step]]] = []
    for step in steps:
        if not groups or groups[-1][0] != step.attempt:
            groups.append((step.attempt, []))
        groups[-1][1].append(step)
    return groups


def _calls_text(step: Step) -> str:
    calls = step.response.tool_calls if step.response else []
    return ", ".join(f"{c.name}({c.arguments_json()})" for c in calls)


def candidate_html(step: Step, dark: bool) -> str:
    """What the attempt offered as its answer: text, a structured output, nothing, an error."""
    response = step.response
    kind = step_kind(step)
    if step.status == "error":
        return note(f"error: {step.error or ''}", dark)
    if kind == "tool call":  # the attempt is still working with tools (or ended there)
        return note(f"tool call: {_calls_text(step)}", dark)
    if response is not None and response.refusal:
        return bubble("assistant", pre_text(response.refusal), dark, label="refusal")
    if response is not None and response.tool_calls and kind != "tool call":
        body = "".join(json_html(c.arguments, dark) for c in response.tool_calls)
        return bubble("assistant", body, dark, detail=response.tool_calls[0].name)
    if response is not None and response.text:
        text = response.text
        if step.status == "pending" and len(text) > STREAMING_TAIL:
            # Re-laid out on every refresh while it streams: show the tail, all of it when done.
            skipped = len(text) - STREAMING_TAIL
            text = f"… ({skipped:,} characters so far above) …" + text[-STREAMING_TAIL:]
        return bubble("assistant", pre_text(text), dark)
    if step.status == "pending":
        return note("(streaming…)", dark)
    return note("(empty reply: no text, no tool calls)", dark)


def attempt_html(steps: Sequence[Step], dark: bool) -> str:
    """One attempt: its tool steps in brief, the candidate, its verdicts, the feedback after."""
    tool_steps = [s for s in steps[:-1] if step_kind(s) == "tool call"]
    return attempt_summary_html(tool_steps[:TOOL_STEPS_SHOWN], len(tool_steps), steps[-1], dark)


def attempt_summary_html(
    tool_steps: Sequence[Step], tool_count: int, last: Step, dark: bool
) -> str:
    """``attempt_html`` from what the attempt index keeps: the first tool steps, how many there
    were, and the attempt's last step (its candidate)."""
    parts: list[str] = []
    if tool_count:
        parts.append(heading("Tool steps", dark, str(tool_count)))
        for step in tool_steps[:TOOL_STEPS_SHOWN]:
            parts.append(note(f"step {step.index}: {_calls_text(step)}", dark))
        if tool_count > TOOL_STEPS_SHOWN:
            parts.append(note(f"… {tool_count - TOOL_STEPS_SHOWN:,} more", dark))
    parts.append(heading("Candidate", dark, f"step {last.index}"))
    parts.append(candidate_html(last, dark))
    parts.append(heading("Verdicts", dark))
    if last.verdicts:
        for verdict in last.verdicts:
            colour = status_colour(verdict.status, dark).name()
            reason = f" — {html.escape(verdict.reason)}" if verdict.reason else ""
            parts.append(f"<div>{tag(verdict_label(verdict), colour)}{reason}</div>")
    else:
        parts.append(note("none" if last.status != "pending" else "waiting…", dark))
    parts.append(heading("Feedback that followed", dark))
    if last.feedback:
        parts.append(messages_html(last.feedback, dark))
    else:
        parts.append(note("none", dark))
    return "".join(parts)


def attempt_title(steps: Sequence[Step], dark: bool) -> str:
    return title_html(steps[-1], any(s.cleared for s in steps), dark)


def title_html(last: Step, cleared: bool, dark: bool) -> str:
    bits = [f"<b>Attempt {last.attempt}</b>"]
    bits.append(tag(words(last.status), status_colour(last.status, dark).name()))
    if cleared:
        bits.append(tag("cleared", muted(dark)))
    return " · ".join(bits)


def kept_html(record: RunRecord | None, dark: bool) -> str:
    if record is None:
        return note("The run is in progress.", dark)
    why = str(record.termination)
    if record.fallback_trigger:
        why = f"{record.fallback_trigger} → {record.termination}"
    parts = [
        f"<div>{tag(record.status, status_colour(_run_colour(record.status), dark).name())}"
        f" · {html.escape(why)}</div>"
    ]
    if record.status == "fallback":
        parts.append(note("Supplied by the invalid-output handler, not by the model.", dark))
    if record.error is not None:
        parts.append(note(f"{record.error.type}: {record.error.message}", dark))
    if record.output is None:
        parts.append(note("No output was kept.", dark))
    elif isinstance(record.output, str):
        parts.append(bubble("assistant", pre_text(record.output), dark, label="output"))
    else:
        parts.append(bubble("assistant", json_html(record.output, dark), dark, label="output"))
    return "".join(parts)


def _run_colour(status: str) -> str:
    return {"succeeded": "success", "fallback": "empty", "failed": "fail"}.get(status, status)


def final_call_html(steps: Sequence[Step], dark: bool) -> str:
    if not steps:
        return note("No model call yet.", dark)
    last = steps[-1]
    request = last.request
    parts = [note(f"The request of step {last.index} (attempt {last.attempt}).", dark)]
    if request.system:
        parts.append(bubble("system", pre_text(request.system), dark))
    parts.append(messages_html(request.messages, dark))
    return "".join(parts)


def transcript_html(record: RunRecord | None, dark: bool) -> str:
    if record is None:
        return note("Written when the run finishes.", dark)
    if not record.transcript:
        return note("The transcript is empty.", dark)
    return messages_html(record.transcript, dark)


def streamed_html(steps: Sequence[Step], record: RunRecord | None, dark: bool) -> str:
    """What an end user's streaming UI showed, in order; cleared candidates struck through."""
    tools = sum(1 for s in steps if step_kind(s) == "tool call")
    return streamed_summary_html(steps, tools, 0, record, dark)


def streamed_summary_html(
    steps: Sequence[Step], tool_total: int, earlier: int, record: RunRecord | None, dark: bool
) -> str:
    """``streamed_html`` from a selection of the run's steps, in order: its tool steps are
    shown up to ``TOOL_STEPS_SHOWN`` of the run's ``tool_total``; ``earlier``: candidates left
    out before the selection's (a run of 10,000 attempts shows its last ones)."""
    parts: list[str] = []
    if earlier:
        parts.append(note(f"… {earlier:,} earlier candidates not shown", dark))
    tool_lines = 0
    for step in steps:
        if step_kind(step) == "tool call":
            tool_lines += 1
            if tool_lines <= TOOL_STEPS_SHOWN:
                parts.append(note(f"⚙ step {step.index}: {_calls_text(step)}", dark))
            continue
        body = candidate_html(step, dark)
        if step.cleared:
            detail = "shown, then cleared"
            body = f'<div style="text-decoration:line-through">{body}</div>'
        else:
            detail = "still shown" if step.status != "pending" else "streaming"
        parts.append(
            f"<div>{tag(f'step {step.index} · attempt {step.attempt}', muted(dark))}"
            f" — {html.escape(detail)}</div>{body}"
        )
    if tool_total > TOOL_STEPS_SHOWN:
        parts.append(note(f"… and {tool_total - TOOL_STEPS_SHOWN:,} more tool steps", dark))
    if record is not None and record.status == "fallback" and record.output is not None:
        value: Any = record.output
        body = pre_text(value) if isinstance(value, str) else json_html(value, dark)
        parts.append(bubble("assistant", body, dark, label="fallback", detail="then shown"))
    return "".join(parts) or note("Nothing yet.", dark)


class _Column(QFrame):
    """A titled rich-text column."""

    def __init__(self, parent: QWidget, title: str = "") -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(title, self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.body = ChatView(self)
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.body, 1)


class AttemptsView(QWidget):
    """Renders only what is on screen: nothing while hidden (a dock tabbed behind another
    included), and of the attempts only the few columns scrolled into view — stand-ins of
    the same width hold the place of the others, so the scroll bar spans them all."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._run = LiveRun()
        self._index = AttemptIndex()
        self._columns: list[_Column] = []  # the pool, bound to attempts first, first + 1...
        self._bound: list[tuple[int, int, bool] | None] = []  # per column: what it shows
        self._first = 0

        self._strip = QWidget(self)
        self._strip_layout = QHBoxLayout(self._strip)
        self._strip_layout.setContentsMargins(0, 0, 0, 0)
        self._strip_layout.setSpacing(COLUMN_SPACING)
        self._before, self._after = QWidget(self._strip), QWidget(self._strip)
        self.kept = _Column(self._strip, "<b>Kept answer</b>")
        self.kept.setMinimumWidth(COLUMN_WIDTH)
        for widget in (self._before, self._after, self.kept):
            self._strip_layout.addWidget(widget)
        self._before.hide()
        self._after.hide()
        self._scroll = scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self._strip)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.horizontalScrollBar().valueChanged.connect(self._scrolled)

        self.final_call = _Column(self, "<b>Model saw on the final call</b>")
        self.transcript = _Column(self, "<b>Persisted transcript</b>")
        self.streamed = _Column(self, "<b>Streaming UI showed, then cleared</b>")
        views = QSplitter(Qt.Orientation.Horizontal, self)
        for column in (self.final_call, self.transcript, self.streamed):
            views.addWidget(column)

        attempts_box = QWidget(self)
        attempts_layout = QVBoxLayout(attempts_box)
        attempts_layout.setContentsMargins(0, 0, 0, 0)
        attempts_layout.addWidget(QLabel("<b>Attempts</b>", attempts_box))
        attempts_layout.addWidget(scroll, 1)
        views_box = QWidget(self)
        views_layout = QVBoxLayout(views_box)
        views_layout.setContentsMargins(0, 0, 0, 0)
        views_layout.addWidget(QLabel("<b>Three views of the turn</b>", views_box))
        views_layout.addWidget(views, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(attempts_box)
        split.addWidget(views_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._refresh_if_visible)
        self._stale = False  # something changed while hidden: refresh when shown
        self._catch_up = False  # a refresh is scheduled for the next event-loop turn
        self.refresh()

    def show_run(self, run: LiveRun) -> None:
        self._run = run
        self._index = AttemptIndex()
        self._bound = [None] * len(self._columns)
        self._timer.stop()
        self._refresh_if_visible()

    def on_event(self, event: Event) -> None:
        index = getattr(event, "index", None)
        live = self._run.step(index) if isinstance(index, int) else None
        if live is not None:
            self._index.step_changed(live)
        if not self.on_screen():  # hidden, or a tab behind another: nobody sees a re-render
            self._stale = True
        elif not self._timer.isActive():
            self._timer.start()

    def on_screen(self) -> bool:
        """Shown and not covered: ``isVisible()`` alone is true for a dock tabbed behind
        another."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

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

    def _soon(self) -> None:
        """A refresh at the next event-loop turn (the timer keeps its REFRESH_MS interval)."""
        self._catch_up = True

        def refresh() -> None:
            self._catch_up = False
            self._refresh_if_visible()

        QTimer.singleShot(0, self, refresh)

    @property
    def attempt_columns(self) -> list[_Column]:
        return [c for c in self._columns if not c.isHidden()]

    def refresh(self) -> None:
        self._stale = False
        if self._index.update(self._run.steps):
            self._soon()  # more steps to classify: the rest in the next slices
        dark = is_dark(self.palette())
        run = self._run
        self._bind_columns(dark)
        spans = self._index.spans
        last = run.steps[spans[-1].end - 1].as_step() if spans else None
        self.kept.body.set_body(kept_html(run.record, dark))
        self.final_call.body.set_body(final_call_html([last] if last else [], dark))
        self.transcript.body.set_body(transcript_html(run.record, dark))
        self.streamed.body.set_body(self._streamed_html(dark))

    # -- the attempt columns: a pool bound to the attempts scrolled into view ----------------

    def _pool_size(self) -> int:
        fits = self._scroll.viewport().width() // (COLUMN_WIDTH + COLUMN_SPACING) + 2
        return min(len(self._index.spans), max(POOL_MIN, fits))

    def _scrolled(self, value: int) -> None:
        first = self._first_for(value)
        if first != self._first and self.on_screen():
            self._bind_columns(is_dark(self.palette()))

    def _first_for(self, scrolled: int) -> int:
        spans, pool = len(self._index.spans), self._pool_size()
        return max(0, min(spans - pool, scrolled // (COLUMN_WIDTH + COLUMN_SPACING)))

    def _bind_columns(self, dark: bool) -> None:
        spans, pool = self._index.spans, self._pool_size()
        while len(self._columns) < pool:
            column = _Column(self._strip)
            column.setMinimumWidth(COLUMN_WIDTH)
            self._strip_layout.insertWidget(len(self._columns) + 1, column)
            self._columns.append(column)
            self._bound.append(None)
        self._first = first = self._first_for(self._scroll.horizontalScrollBar().value())
        step = COLUMN_WIDTH + COLUMN_SPACING
        for spacer, count in ((self._before, first), (self._after, len(spans) - first - pool)):
            spacer.setFixedWidth(max(0, count * step - COLUMN_SPACING))
            spacer.setVisible(count > 0)
        for slot, column in enumerate(self._columns):
            if slot >= pool:
                column.hide()
                self._bound[slot] = None
                continue
            span = spans[first + slot]
            key = (span.number, span.version, dark)
            if self._bound[slot] != key:
                self._bound[slot] = key
                last = self._run.steps[span.end - 1].as_step()
                column.title.setText(title_html(last, span.cleared or last.cleared, dark))
                column.body.set_body(
                    attempt_summary_html(span.tool_steps, span.tool_count, last, dark)
                )
            column.show()

    def _streamed_html(self, dark: bool) -> str:
        """The run's first tool steps and the candidates of its last ``STREAMED_ATTEMPTS``
        attempts (all of them, for any run a person reads through)."""
        steps, spans = self._run.steps, self._index.spans
        shown = spans[-STREAMED_ATTEMPTS:]
        earlier = sum(len(s.candidates) + 1 for s in spans[: len(spans) - len(shown)])
        picked = {s.index: s for s in self._index.first_tools}
        for span in shown:
            for position in (*span.candidates, span.end - 1):
                step = steps[position].as_step()
                picked[step.index] = step
        selection = [picked[i] for i in sorted(picked)]
        tools = self._index.tool_total + sum(
            1 for s in shown if step_kind(steps[s.end - 1].as_step()) == "tool call"
        )
        return streamed_summary_html(selection, tools, earlier, self._run.record, dark)
