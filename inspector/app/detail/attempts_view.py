"""Attempts side by side: one column per attempt of the turn (its candidate output, its
verdicts, the feedback that followed), then the kept answer; below them the three views of one
turn (DESIGN §4): what the model saw on the final call, the persisted transcript, and what a
streaming UI showed and then cleared.

Events only mark the view stale; it re-renders at most every ``REFRESH_MS``, so a fast stream
costs one render per interval, not one per token.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

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
TOOL_STEPS_SHOWN = 12
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
    last = steps[-1]
    parts: list[str] = []
    tool_steps = [s for s in steps[:-1] if step_kind(s) == "tool call"]
    if tool_steps:
        parts.append(heading("Tool steps", dark, str(len(tool_steps))))
        for step in tool_steps[:TOOL_STEPS_SHOWN]:
            parts.append(note(f"step {step.index}: {_calls_text(step)}", dark))
        if len(tool_steps) > TOOL_STEPS_SHOWN:
            parts.append(note(f"… {len(tool_steps) - TOOL_STEPS_SHOWN:,} more", dark))
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
    last = steps[-1]
    bits = [f"<b>Attempt {last.attempt}</b>"]
    bits.append(tag(words(last.status), status_colour(last.status, dark).name()))
    if any(s.cleared for s in steps):
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
    parts: list[str] = []
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
    if tool_lines > TOOL_STEPS_SHOWN:
        parts.append(note(f"… and {tool_lines - TOOL_STEPS_SHOWN:,} more tool steps", dark))
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
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._run = LiveRun()
        self._columns: list[_Column] = []

        self._strip = QWidget(self)
        self._strip_layout = QHBoxLayout(self._strip)
        self._strip_layout.setContentsMargins(0, 0, 0, 0)
        self.kept = _Column(self._strip, "<b>Kept answer</b>")
        self.kept.setMinimumWidth(COLUMN_WIDTH)
        self._strip_layout.addWidget(self.kept)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self._strip)
        scroll.setFrameShape(QFrame.Shape.NoFrame)

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
        self.refresh()

    def show_run(self, run: LiveRun) -> None:
        self._run = run
        self._timer.stop()
        self._refresh_if_visible()

    def on_event(self, event: Event) -> None:
        del event  # any event may change a column; re-render once per interval
        if not self.isVisible():  # a tab behind another: no re-rendering nobody sees
            self._stale = True
        elif not self._timer.isActive():
            self._timer.start()

    def _refresh_if_visible(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    @property
    def attempt_columns(self) -> list[_Column]:
        return [c for c in self._columns if not c.isHidden()]

    def refresh(self) -> None:
        self._stale = False
        dark = is_dark(self.palette())
        run = self._run
        steps = run.record.steps if run.record is not None else [s.as_step() for s in run.steps]
        groups = group_attempts(steps)
        while len(self._columns) < len(groups):
            column = _Column(self._strip)
            column.setMinimumWidth(COLUMN_WIDTH)
            self._strip_layout.insertWidget(len(self._columns), column)
            self._columns.append(column)
        for column, (_, group) in zip(self._columns, groups, strict=False):
            column.title.setText(attempt_title(group, dark))
            column.body.set_body(attempt_html(group, dark))
            column.show()
        for column in self._columns[len(groups) :]:
            column.hide()
        self.kept.body.set_body(kept_html(run.record, dark))
        self.final_call.body.set_body(final_call_html(steps, dark))
        self.transcript.body.set_body(transcript_html(run.record, dark))
        self.streamed.body.set_body(streamed_html(steps, run.record, dark))
