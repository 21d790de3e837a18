"""The right pane: one step in detail, in five tabs — *Model saw* (the exact request, badged
with what the loop did, and its diff with the previous call: ``model_saw.py``),
*Response* (streaming live), *Verdicts*, *Feedback injected* and *Raw*.

Only the visible tab is rendered, and only while the pane is on screen (not hidden, not in a
dock tabbed behind another); the rest is marked stale and rendered when shown, so moving
through steps with Up/Down stays quick. While the shown step streams, text and reasoning
deltas are buffered and appended every ``FLUSH_MS`` (never re-rendering what is already shown),
so a fast stream costs the UI one small append per flush.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeySequence, QPaintEvent, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.app.detail.chat_bubbles import (
    MESSAGE_LIMIT,
    ChatView,
    bubble,
    heading,
    message_html,
    muted,
    note,
    pre_text,
    tag,
)
from inspector.app.detail.model_saw import ModelSawPane
from inspector.app.theme import is_dark, status_colour
from inspector.app.widgets.json_view import JsonView, json_html
from inspector.app.widgets.loop_turns import in_own_turn
from inspector.app.widgets.status_line import StatusLine
from inspector.app.widgets.throttle import Throttle
from inspector.core.events import (
    Event,
    FallbackUsed,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
)
from inspector.core.lazy_steps import light_rows
from inspector.core.live import LiveRun, LiveStep
from inspector.core.raw_body import plain
from inspector.core.records import Step
from inspector.reports.labels import missing_text, words
from inspector.reports.timeline_cells import forced_markers

TAB_NAMES = ("Model saw", "Response", "Verdicts", "Feedback injected", "Raw")
MODEL_SAW, RESPONSE, VERDICTS, FEEDBACK, RAW = range(len(TAB_NAMES))
FLUSH_MS = 30
# The Model saw tab first renders the request's last MESSAGES_SHOWN messages (a 1,000-step
# turn's request holds 2,000: rendering them cost ~60 ms a step); "Show more" renders up to
# chat_bubbles.MESSAGE_LIMIT. Steps followed as they arrive (a live run, a playback) render at
# most once per FLUSH_MS: the last one wins.
MESSAGES_SHOWN = 40
MORE_MESSAGES = "inspector:more-messages"


class ResponsePane(QWidget):
    """Finish reason and usage, refusal or error, reasoning, text (appended as it streams) and
    tool calls with their pretty-printed arguments and results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.meta = QLabel(self)
        self.meta.setTextFormat(Qt.TextFormat.RichText)
        self.meta.setWordWrap(True)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasoning = self._text_box("Reasoning")
        self.text = self._text_box("Text")
        self.tool_calls = ChatView(self)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setChildrenCollapsible(False)
        for part in (self.reasoning, self.text, self.tool_calls):
            splitter.addWidget(part)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.meta)
        layout.addWidget(self.problem)
        layout.addWidget(splitter, 1)

    def _text_box(self, title: str) -> QPlainTextEdit:
        box = QPlainTextEdit(self)
        box.setReadOnly(True)
        box.setPlaceholderText(f"{title}: nothing yet")
        box.setToolTip(title)
        return box


class StepDetail(QWidget):
    # (LiveRun, step index): a light run's step whose request a tab needs (LiveRun.light)
    wholeStepWanted = Signal(object, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._run: LiveRun | None = None
        self._index = 0
        self._asked = (0, 0)  # (id of the run, step) whose whole step was last asked for
        self._stale: set[int] = set(range(len(TAB_NAMES)))
        self._messages_shown = MESSAGES_SHOWN
        self._catch_up = False  # a render is scheduled for the next event-loop turn
        self._pending_text: list[str] = []
        self._pending_reasoning: list[str] = []

        # Wrapped (a long title must not widen the dock over the timeline); a new title relays
        # the window out only when it takes another number of lines (widgets/status_line.py).
        self.title = StatusLine("", self, wrap=True)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.model_saw_pane = ModelSawPane(self)
        self.model_saw = self.model_saw_pane.chat  # the request as badged bubbles
        self.model_saw.anchorClicked.connect(self._more_messages)
        self.response = ResponsePane(self)
        self.verdicts = ChatView(self)
        self.feedback = ChatView(self)
        self.raw = JsonView(self)
        self.raw_note = QLabel(self)
        self.raw_note.setWordWrap(True)  # a long note must not widen the dock for good
        raw_page = QWidget(self)
        raw_layout = QVBoxLayout(raw_page)
        raw_layout.setContentsMargins(6, 6, 6, 6)
        raw_layout.addWidget(self.raw_note)
        raw_layout.addWidget(self.raw, 1)
        pages = (self.model_saw_pane, self.response, self.verdicts, self.feedback, raw_page)
        for name, page in zip(TAB_NAMES, pages, strict=True):
            self.tabs.addTab(page, name)
        self.tabs.currentChanged.connect(self._render_current)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.tabs, 1)
        self.title.setContentsMargins(8, 4, 8, 2)

        self._flush_timer = Throttle(self, FLUSH_MS, lambda: in_own_turn(self, self._flush))
        self._add_shortcuts()
        self._render_title()
        self._render_current()

    def _add_shortcuts(self) -> None:
        def add(keys: str, action: object) -> None:
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(action)

        add("Ctrl+Tab", lambda: self.tabs.setCurrentIndex((self.tabs.currentIndex() + 1) % 5))
        add("Ctrl+Shift+Tab", lambda: self.tabs.setCurrentIndex((self.tabs.currentIndex() - 1) % 5))
        for number in range(len(TAB_NAMES)):
            add(f"Ctrl+{number + 1}", lambda n=number: self.tabs.setCurrentIndex(n))

    # -- interface the shell uses ---------------------------------------------------------

    def show_step(self, run: LiveRun, index: int, *, soon: bool = False) -> None:
        """Shows step ``index``; ``soon``: within ``FLUSH_MS`` (steps followed as they arrive:
        of several in that time, only the last is rendered)."""
        if run is not self._run:  # another run (maybe at a freed one's id): nothing asked yet
            self._asked = (0, 0)
        self._run, self._index = run, index
        self._stale = set(range(len(TAB_NAMES)))
        self._messages_shown = MESSAGES_SHOWN
        self._render_title()
        if not soon:
            self._render_current()
        else:
            self._flush_timer.poke()

    def _more_messages(self, url: QUrl) -> None:
        if url.toString() == MORE_MESSAGES:
            self._messages_shown = MESSAGE_LIMIT
            self._stale.add(MODEL_SAW)
            self._render_current()

    def on_event(self, event: Event) -> None:
        if self._run is None or isinstance(event, RunStarted | FallbackUsed | StepStarted):
            return
        if isinstance(event, RunFinished):  # the run's steps are now the record's
            self._stale = set(range(len(TAB_NAMES)))
            self._render_title()
            self._render_current()
            return
        index = event.step.index if isinstance(event, StepFinished) else event.index
        if index != self._index:
            return
        if isinstance(event, TextDelta | ReasoningDelta):
            if RESPONSE not in self._stale:  # shown already: append, don't re-render
                pending = (
                    self._pending_text if isinstance(event, TextDelta) else self._pending_reasoning
                )
                pending.append(event.text)
                self._flush_timer.poke()
            self._stale.add(RAW)
            return
        if isinstance(event, ToolCallDelta):
            self._stale.update((RESPONSE, RAW))
        else:
            self._stale = set(range(len(TAB_NAMES)))
            self._render_title()
        self._flush_timer.poke()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.tabs.currentIndex() in self._stale and not self._catch_up:
            self._catch_up = True  # uncovered: render what changed while it was hidden
            QTimer.singleShot(0, self._caught_up)

    def _caught_up(self) -> None:
        self._catch_up = False
        self._render_current()

    @property
    def current_step(self) -> int:
        return self._index

    # -- rendering --------------------------------------------------------------------------

    def _live(self) -> LiveStep | None:
        return self._run.step(self._index) if self._run is not None else None

    def _flush(self) -> None:
        if self._pending_text or self._pending_reasoning:
            for box, pending in (
                (self.response.text, self._pending_text),
                (self.response.reasoning, self._pending_reasoning),
            ):
                if pending:
                    cursor = QTextCursor(box.document())
                    cursor.movePosition(QTextCursor.MoveOperation.End)
                    cursor.insertText("".join(pending))
                    pending.clear()
            self.response.reasoning.setVisible(not self.response.reasoning.document().isEmpty())
        self._render_current()

    def _render_current(self) -> None:
        tab = self.tabs.currentIndex()
        if tab not in self._stale:
            return
        if self._run is not None and (not self.isVisible() or self.visibleRegion().isEmpty()):
            return  # hidden, or a dock tab behind another: rendered on its next paint
        self._stale.discard(tab)
        live = self._live()
        if live is None or self._run is None:
            self._render_empty(tab)
            return
        rows = light_rows(self._run) if tab in (MODEL_SAW, RAW) else None
        if rows is not None and not rows.whole(self._index):  # its request is not read yet
            self._render_empty(tab, f"Loading step {self._index}'s request…")
            wanted = (id(self._run), self._index)
            if self._asked != wanted and rows.light_request(self._index):
                self._asked = wanted
                self.wholeStepWanted.emit(self._run, self._index)
            return  # rendered again once read (the window shows the step again)
        if rows is not None and tab == MODEL_SAW:
            self.model_saw_pane.show_request(live.as_step(), self._messages_shown, MORE_MESSAGES)
            return
        if tab == MODEL_SAW:
            self.model_saw_pane.show_step(
                self._run, self._index, self._messages_shown, more_link=MORE_MESSAGES
            )
            return
        step = live.as_step()
        dark = is_dark(self.palette())
        if tab == RESPONSE:
            self._render_response(step, dark)
        elif tab == VERDICTS:
            self.verdicts.set_body(verdicts_html(step, dark))
        elif tab == FEEDBACK:
            self.feedback.set_body(feedback_html(step, dark))
        else:
            self._render_raw(step)

    def _render_empty(self, tab: int, text: str = "Select a step in the timeline.") -> None:
        if tab == MODEL_SAW:
            self.model_saw_pane.clear(text)
        elif tab in (VERDICTS, FEEDBACK):
            page = self.verdicts if tab == VERDICTS else self.feedback
            page.set_body(note(text, is_dark(self.palette())))
        elif tab == RESPONSE:
            self.response.meta.setText(text)
            self.response.problem.hide()
            for box in (self.response.text, self.response.reasoning):
                box.clear()
            self.response.tool_calls.set_body("")
        else:
            self.raw_note.setText(text)
            self.raw.set_json_text("")

    def _render_title(self) -> None:
        live = self._live()
        if live is None:
            self.title.setText("<b>No step selected</b>")
            return
        dark = is_dark(self.palette())
        colour = status_colour(live.status, dark).name()
        parts = [
            f"<b>Step {live.index}</b>",
            f"attempt {live.attempt}",
            tag(words(live.status), colour),
        ]
        if live.cleared:
            parts.append(tag("cleared", muted(dark)))
        markers = [label for label, _ in forced_markers(live.forced)]
        if markers:
            parts.append("forced: " + html.escape(", ".join(markers)))
        self.title.setText(" · ".join(parts))

    def _render_response(self, step: Step, dark: bool) -> None:
        pane = self.response
        self._pending_text.clear()
        self._pending_reasoning.clear()
        response = step.response
        pane.meta.setText(response_meta_html(step, dark))
        problem = ""
        if response is not None and response.refusal:
            problem = f"Refusal: {response.refusal}"
        elif step.error:
            problem = f"Error: {step.error}"
        pane.problem.setText(problem)
        pane.problem.setStyleSheet(f"color: {status_colour('error', dark).name()}")
        pane.problem.setVisible(bool(problem))
        text = response.text if response is not None else ""
        reasoning = (response.reasoning or "") if response is not None else ""
        if pane.text.toPlainText() != text:
            pane.text.setPlainText(text)
        pane.text.setPlaceholderText(missing_text(step))
        if pane.reasoning.toPlainText() != reasoning:
            pane.reasoning.setPlainText(reasoning)
        pane.reasoning.setVisible(bool(reasoning))
        calls = tool_calls_html(step, dark)
        pane.tool_calls.set_body(calls)
        pane.tool_calls.setVisible(bool(calls))

    def _render_raw(self, step: Step) -> None:
        raw = step.raw
        if raw is not None and (raw.request is not None or raw.response is not None):
            self.raw_note.setText("Raw wire bodies as exchanged (auth redacted).")
            self.raw.set_value({"request": plain(raw.request), "response": raw.response})
            return
        self.raw_note.setText(
            "No raw wire body for this step (the scripted model sends none, or it is still "
            "streaming): the normalised request and response."
        )
        self.raw.set_value(
            {
                "request": step.request.model_dump(mode="json"),
                "response": step.response.model_dump(mode="json") if step.response else None,
            }
        )


# -- HTML for the tabs (pure functions of a step, so tests and other views can use them) ----


def response_meta_html(step: Step, dark: bool) -> str:
    response = step.response
    items = [tag(words(step.status), status_colour(step.status, dark).name())]
    if response is not None:
        items.append(f"finish reason: <b>{html.escape(response.finish_reason or '—')}</b>")
        usage = response.usage
        items.append(f"tokens in {usage.input_tokens:,} / out {usage.output_tokens:,}")
    if step.latency_ms is not None:
        items.append(f"latency {step.latency_ms:,.0f} ms")
    if step.ttft_ms is not None:
        items.append(f"first token {step.ttft_ms:,.0f} ms")
    return " · ".join(items)


def tool_calls_html(step: Step, dark: bool) -> str:
    """Each tool call with its pretty JSON arguments and, once run, its result."""
    response = step.response
    if response is None or not response.tool_calls:
        return ""
    results = {r.tool_call_id: r for r in step.tool_results}
    parts = [heading("Tool calls", dark, f"{len(response.tool_calls)}")]
    for call in response.tool_calls:
        body = json_html(call.arguments, dark)
        result = results.get(call.id)
        if result is not None:
            label = (
                "error" if result.error else ("result (replayed)" if result.replayed else "result")
            )
            colour = status_colour("error" if result.error else "pass", dark).name()
            body += f"<div>{tag(label, colour)}</div>" + pre_text(result.error or result.content)
            if result.captured:  # what the tool function printed
                body += f"<div>{tag('printed', muted(dark))}</div>" + pre_text(result.captured)
        elif step.internal_tool:
            body += note("The synthetic final-answer tool: its arguments are the output.", dark)
        parts.append(bubble("tool", body, dark, label=call.name, detail=call.id))
    return "".join(parts)


def verdicts_html(step: Step, dark: bool) -> str:
    if not step.verdicts:
        why = (
            "still streaming"
            if step.status == "pending"
            else "no validator judged this step (tool-call steps are not validated)"
        )
        return note(f"No verdicts: {why}.", dark)
    rows = [
        "<tr>"
        + "".join(
            f'<th align="left">{h}</th>' for h in ("Validator", "Status", "Reason", "Feedback")
        )
        + "</tr>"
    ]
    for verdict in step.verdicts:
        colour = status_colour(verdict.status, dark).name()
        rows.append(
            "<tr>"
            f"<td><b>{html.escape(verdict.validator)}</b></td>"
            f"<td>{tag(verdict.status, colour)}</td>"
            f"<td>{html.escape(verdict.reason)}</td>"
            f"<td>{html.escape(verdict.feedback or '')}</td>"
            "</tr>"
        )
        if verdict.captured:  # what the python validator printed during this call
            rows.append(
                f'<tr><td colspan="4">{tag("printed", muted(dark))}'
                f"{pre_text(verdict.captured)}</td></tr>"
            )
    return (
        '<table width="100%" cellspacing="0" cellpadding="5" border="1" '
        f'style="border-collapse:collapse;border-color:{muted(dark)}">' + "".join(rows) + "</table>"
    )


def feedback_html(step: Step, dark: bool) -> str:
    printed = ""
    if step.captured:  # what the feedback builder or fallback function printed
        printed = heading("Printed by the feedback builder / fallback", dark) + pre_text(
            step.captured
        )
    if not step.feedback:
        return note("No messages were injected after this step.", dark) + printed
    parts = [
        printed,
        heading(
            "Injected after this step",
            dark,
            f"{len(step.feedback)} message(s) the next attempt's request gains",
        ),
    ]
    parts.extend(message_html(m, dark, label=f"feedback · {m.role}") for m in step.feedback)
    return "".join(parts)
