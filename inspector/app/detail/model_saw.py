"""The *Model saw* tab: the exact request a step sent, each message badged with what the loop
did (``reports/request_marks.py``), a line saying how many messages are new since the previous
call, and, one click away, a line diff of the request against the previous call's or the
previous attempt's (``reports/request_diff.py``).

Nothing here may widen the Step dock: the line above the request wraps and the diff wraps to
the pane's width.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import overload

from PySide6.QtCore import QEvent
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.app.detail.chat_bubbles import (
    MESSAGE_LIMIT,
    ChatView,
    bubble,
    chip,
    heading,
    messages_html,
    muted,
    note,
    pre_text,
)
from inspector.app.theme import is_dark
from inspector.app.widgets.diff_tints import fill_tinted
from inspector.app.widgets.json_view import json_html, monospace_font
from inspector.app.widgets.status_line import StatusLine
from inspector.core.live import LiveRun
from inspector.core.records import Step
from inspector.reports.labels import forced_markers
from inspector.reports.request_diff import RequestDiff, request_diff
from inspector.reports.request_marks import (
    FINAL_STEP,
    FailureIndex,
    RequestMarks,
    previous_attempt_step,
    request_marks,
)

MESSAGES, PREVIOUS_CALL, PREVIOUS_ATTEMPT = "messages", "previous call", "previous attempt"
_SIGNS = {"same": "  ", "added": "+ ", "removed": "- "}


class RunSteps(Sequence[Step]):
    """A run's steps as records, made one at a time where asked (a bisection asks a handful):
    never a list of every step per render."""

    def __init__(self, run: LiveRun) -> None:
        self._steps = run.steps

    def __len__(self) -> int:
        return len(self._steps)

    @overload
    def __getitem__(self, i: int) -> Step: ...

    @overload
    def __getitem__(self, i: slice) -> list[Step]: ...

    def __getitem__(self, i: int | slice) -> Step | list[Step]:
        if isinstance(i, slice):
            return [live.as_step() for live in self._steps[i]]
        return self._steps[i].as_step()


WHOLE_LATER = "Badges and diffs come once the whole run is read."


def run_failures(
    run: LiveRun, failures: FailureIndex | None = None, steps: Sequence[Step] | None = None
) -> FailureIndex:
    """``failures`` (a new one when None) grown with the attempts of ``run`` ended so far, as
    the pane grows its own (``steps``: ``RunSteps(run)``). Qt-free: the full read of a long
    stored run builds it on a worker thread (``stored_open.fill``: 10,000 attempts are
    ~10-20 ms of the first render of a step otherwise)."""
    failures = FailureIndex() if failures is None else failures
    if len(run.finals) == len(run.steps):  # each step's final Step, or None: plain lists
        failures.update(run.finals, run.steps)
    else:
        failures.update(RunSteps(run) if steps is None else steps)
    return failures


class ModelSawPane(QWidget):
    """The line above the request, the two diff toggles, and the request (or its diff)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Rewritten at each step followed: relaid out only when it takes another number of
        # lines (widgets/status_line.py).
        self.summary = StatusLine("", self, wrap=True)
        self.diff_call = self._toggle("Diff: previous call")
        self.diff_attempt = self._toggle("Diff: previous attempt")
        self.chat = ChatView(self)
        self.diff = QPlainTextEdit(self)
        self.diff.setReadOnly(True)
        self.diff.setUndoRedoEnabled(False)
        self.diff.setFont(monospace_font())
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.chat)
        self.stack.addWidget(self.diff)
        toggles = QHBoxLayout()
        toggles.setContentsMargins(0, 0, 0, 0)
        toggles.addWidget(self.diff_call)
        toggles.addWidget(self.diff_attempt)
        toggles.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 0)
        layout.setSpacing(4)
        layout.addWidget(self.summary)
        layout.addLayout(toggles)
        layout.addWidget(self.stack, 1)
        self.mode = MESSAGES
        self._steps: Sequence[Step] = ()
        self._index = 0
        self._marks = RequestMarks()
        self._failures = FailureIndex()
        self._failures_of: tuple[object, object] = ((), None)  # its run's steps and record
        self.shown_diff: RequestDiff | None = None

    def _toggle(self, text: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setCheckable(True)
        button.setAutoRaise(False)
        button.setMinimumWidth(24)  # a narrow dock clips the label rather than staying wide
        button.clicked.connect(lambda checked, b=button: self._toggled(b, checked))
        return button

    # -- what the step detail calls ---------------------------------------------------------

    def clear(self, text: str) -> None:
        self._steps, self._index = (), 0
        self._failures, self._failures_of = FailureIndex(), ((), None)  # the run's, let go
        self.summary.setText("")
        self.summary.hide()
        for button in (self.diff_call, self.diff_attempt):
            button.setEnabled(False)
        self.stack.setCurrentWidget(self.chat)
        self.chat.set_body(note(text, is_dark(self.palette())))

    def show_request(self, step: Step, limit: int = MESSAGE_LIMIT, more_link: str = "") -> None:
        """``step``'s request alone, read before its run is read whole: no badges, no diffs
        (they read the other steps' requests)."""
        self.clear("")
        self.summary.setText(WHOLE_LATER)
        self.summary.show()
        self.chat.set_body(request_html(step, is_dark(self.palette()), limit, more_link))

    def show_step(
        self, run: LiveRun, index: int, limit: int = MESSAGE_LIMIT, more_link: str = ""
    ) -> None:
        """Step ``index`` of ``run``: its request with badges, and the diff if one is on."""
        steps = RunSteps(run)
        step = steps[index - 1]
        policy = run.record.policy if run.record else run.header.policy if run.header else None
        self._steps, self._index = steps, index
        self._marks = request_marks(steps, index, policy, self._failures_for(run, steps))
        dark = is_dark(self.palette())
        self.chat.set_body(request_html(step, dark, limit, more_link, self._marks))
        before = previous_attempt_step(steps, index)
        self.diff_call.setEnabled(index > 1)
        self.diff_call.setToolTip(
            f"The lines step {index}'s request adds to or drops from step {index - 1}'s"
            if index > 1
            else "The first call of the turn: no previous call"
        )
        self.diff_attempt.setEnabled(before is not None)
        self.diff_attempt.setToolTip(
            f"Step {index}'s request against step {before.index}'s, whose answer attempt "
            f"{before.attempt} ended with"
            if before is not None
            else "Attempt 1: no previous attempt"
        )
        if (self.mode == PREVIOUS_CALL and index == 1) or (
            self.mode == PREVIOUS_ATTEMPT and before is None
        ):
            self.mode = MESSAGES
        self._show_mode()

    def adopt_failures(self, run: LiveRun, failures: FailureIndex) -> None:
        """``failures``: ``run``'s ``FailureIndex`` as it is now (``run_failures``, built on a
        worker thread), kept while the run's steps and record are these."""
        self._failures, self._failures_of = failures, (run.steps, run.record)

    def _failures_for(self, run: LiveRun, steps: RunSteps) -> FailureIndex:
        """The shown run's ``FailureIndex``, grown as its steps arrive (each attempt looked at
        once); a new one for another run, or once the run's record replaced its steps."""
        steps_of, record_of = self._failures_of
        if steps_of is not run.steps or record_of is not run.record:
            self._failures = FailureIndex()
            self._failures_of = (run.steps, run.record)
        return run_failures(run, self._failures, steps)

    def changeEvent(self, event: QEvent) -> None:
        """A light/dark palette change re-tints the diff shown, where it was scrolled to."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.shown_diff is not None:
            scrolled = self.diff.verticalScrollBar().value()
            fill_tinted(self.diff, signed_lines(self.shown_diff), self.palette())
            self.diff.verticalScrollBar().setValue(scrolled)

    # -- the modes ---------------------------------------------------------------------------

    def _toggled(self, button: QToolButton, checked: bool) -> None:
        mode = PREVIOUS_CALL if button is self.diff_call else PREVIOUS_ATTEMPT
        self.mode = mode if checked else MESSAGES
        self._show_mode()

    def _show_mode(self) -> None:
        self.diff_call.setChecked(self.mode == PREVIOUS_CALL)
        self.diff_attempt.setChecked(self.mode == PREVIOUS_ATTEMPT)
        if not self._steps:
            return
        step = self._steps[self._index - 1]
        self.summary.show()
        if self.mode == MESSAGES:
            self.shown_diff = None
            self.stack.setCurrentWidget(self.chat)
            self.summary.setText(
                new_line(self._marks, len(step.request.messages), is_dark(self.palette()))
            )
            return
        if self.mode == PREVIOUS_CALL:
            other = self._steps[self._index - 2]
            what = "the previous call"
        else:
            found = previous_attempt_step(self._steps, self._index)
            assert found is not None
            other, what = found, f"attempt {found.attempt}'s request"
        diff = request_diff(other.request, step.request)
        self.shown_diff = diff
        skipped = (
            f"; the first {diff.skipped:,} message{'s' * (diff.skipped != 1)}, the same in "
            "both, left out"
            if diff.skipped
            else ""
        )
        self.summary.setText(
            html.escape(
                f"Step {self._index} against step {other.index} ({what}): {diff.summary}{skipped}.",
                quote=False,
            )
        )
        fill_diff(self.diff, diff)
        self.stack.setCurrentWidget(self.diff)


def new_line(marks: RequestMarks, total: int, dark: bool) -> str:
    """How many of the request's messages are new since the previous call (rich text)."""
    if marks.previous is None:  # no tag in it: drawn as plain text, so no entity either
        return f"The turn's first call: its {total:,} message(s) are the opening."
    new = marks.new_count(total)
    if not new:
        return (
            f"No message new since the previous call (step {marks.previous}): "
            "the same messages were sent again."
        )
    return (
        f"{new:,} of {total:,} message{'s' * (total != 1)} new since the previous call "
        f"(step {marks.previous}), marked {chip('NEW', 'new', dark)}."
    )


def signed_lines(diff: RequestDiff) -> list[tuple[str, str]]:
    """The diff's lines with their ``+``/``-`` signs, and their kinds."""
    return [(_SIGNS[line.kind] + line.text, line.kind) for line in diff.lines]


def fill_diff(pane: QPlainTextEdit, diff: RequestDiff) -> None:
    """The diff's lines in ``pane``: ``+``/``-`` signs, added and removed lines tinted."""
    fill_tinted(pane, signed_lines(diff))
    first = next((k for k, line in enumerate(diff.lines) if line.kind != "same"), 0)
    pane.verticalScrollBar().setValue(0)
    if first > 3:  # the first change in view, with some context
        pane.setTextCursor(QTextCursor(pane.document().findBlockByNumber(first - 3)))
        pane.ensureCursorVisible()


def request_html(
    step: Step,
    dark: bool,
    limit: int = MESSAGE_LIMIT,
    more_link: str = "",
    marks: RequestMarks | None = None,
) -> str:
    """System prompt (an appended final-step instruction badged), messages (the last
    ``limit``, badged by ``marks``), tools offered, tool_choice, response format."""
    marks = marks or RequestMarks(system=step.request.system)
    request = step.request
    parts: list[str] = []
    markers = forced_markers(step.forced)
    if markers:
        parts.append(
            note("Forced by the loop: " + "; ".join(tip for _, tip in markers) + ".", dark)
        )
    appended = step.forced is not None and step.forced.instruction_appended
    parts.append(
        heading("System prompt", dark, "final-step instruction appended" if appended else "")
    )
    if request.system:
        body = pre_text(marks.system) if marks.system else ""
        if marks.instruction:
            body += (
                f'<div style="margin-top:6px">{chip(FINAL_STEP, "instruction", dark)}'
                f"&nbsp;{note_span('appended by the loop on the last allowed step', dark)}</div>"
                + pre_text(marks.instruction)
            )
        parts.append(bubble("system", body, dark))
    else:
        parts.append(note("(no system prompt)", dark))
    total = len(request.messages)
    new = marks.new_count(total)
    parts.append(
        heading("Messages", dark, f"{total}" + (f" · {new} new" if marks.previous else ""))
    )
    parts.append(
        messages_html(request.messages, dark, limit, more_link=more_link, badges=marks.badges)
    )
    parts.append(heading("Tools offered", dark, f"{len(request.tools)}"))
    if not request.tools:
        parts.append(note("No tools.", dark))
    for tool in request.tools:
        body = (pre_text(tool.description) if tool.description else "") + json_html(
            tool.parameters, dark
        )
        parts.append(bubble("tool", body, dark, label=tool.name))
    choice = request.tool_choice
    parts.append(heading("tool_choice", dark, "forced" if step.forced else ""))
    parts.append(json_html(choice, dark) if choice is not None else note("not set", dark))
    parts.append(heading("Response format", dark))
    fmt = request.response_format
    parts.append(json_html(fmt, dark) if fmt is not None else note("none (free text)", dark))
    return "".join(parts)


def note_span(text: str, dark: bool) -> str:
    return f'<span style="color:{muted(dark)}">{html.escape(text)}</span>'
