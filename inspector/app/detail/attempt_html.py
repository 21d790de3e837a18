"""The Attempts tab's rich text: an attempt column, the kept answer and the three views of a turn
(DESIGN §4: what the model saw on the final call, the persisted transcript, what a streaming UI
showed and then cleared), as escaped HTML in the palette's colours. What they say comes from
``reports/attempt_columns.py``; this module only dresses it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from inspector.app.detail.chat_bubbles import bubble, heading, messages_html, muted, note, pre_text
from inspector.app.detail.chat_bubbles import tag as _tag
from inspector.app.theme import status_colour
from inspector.app.widgets.json_view import json_html
from inspector.core.records import RunRecord, Step, step_kind
from inspector.reports.attempt_columns import (
    TOOL_STEPS_SHOWN,
    AttemptColumn,
    Candidate,
    KeptColumn,
    VerdictLine,
    calls_text,
    candidate,
)

# The run's status → the colour of a step status that reads the same.
_RUN_COLOURS = {"succeeded": "success", "fallback": "empty", "failed": "fail"}


def colour(status: str, dark: bool) -> str:
    return status_colour(status, dark).name()


def candidate_html(found: Candidate, dark: bool) -> str:
    if found.kind == "text":
        return bubble("assistant", pre_text(found.text), dark, label="answer")
    if found.kind == "structured":
        body = json_html(found.value, dark)
        return bubble("assistant", body, dark, label="answer", detail=found.detail)
    if found.kind == "refusal":
        return bubble("assistant", pre_text(found.text), dark, label="refusal")
    if found.kind == "error":
        return f"<p>{_tag('error', colour('error', dark))} {html.escape(found.text)}</p>"
    if found.kind == "tool call":
        return note(f"ended on a tool call: {found.text}", dark)
    return note(f"({found.text})", dark)


def verdict_html(line: VerdictLine, dark: bool) -> str:
    said = _tag(f"{line.chip} — {line.said}", colour(line.status, dark))
    reason = f"<br>{html.escape(line.reason)}" if line.reason else ""
    extra = (
        f'<br><i style="color:{colour(line.status, dark)}">{html.escape(line.note)}</i>'
        if line.note
        else ""
    )
    return f'<p style="margin:2px 0px 6px 0px">{said}{reason}{extra}</p>'


def column_title(column: AttemptColumn, dark: bool) -> str:
    bits = [
        f"<b>Attempt {column.number}</b>",
        _tag(column.status_words, colour(column.status, dark)),
    ]
    if column.cleared:
        bits.append(_tag("cleared", muted(dark)))
    return " · ".join(bits)


def column_html(column: AttemptColumn, dark: bool) -> str:
    """One attempt: its tool steps in brief, the candidate, its verdicts, the feedback after."""
    parts: list[str] = []
    if column.tool_count:
        parts.append(heading("Tool steps", dark, f"{column.tool_count:,}"))
        parts.extend(note(line, dark) for line in column.tool_lines)
        if column.tool_count > len(column.tool_lines):
            parts.append(note(f"… {column.tool_count - len(column.tool_lines):,} more", dark))
    parts.append(heading("Candidate", dark, f"step {column.step}"))
    parts.append(candidate_html(column.candidate, dark))
    parts.append(heading("Verdicts", dark))
    if column.verdicts:
        parts.extend(verdict_html(line, dark) for line in column.verdicts)
    else:
        parts.append(note("waiting…" if column.waiting else "none", dark))
    parts.append(heading("Feedback that followed", dark))
    for line in column.feedback:
        parts.append(bubble("feedback", pre_text(line.text), dark, label=f"feedback · {line.role}"))
    if not column.feedback:
        parts.append(note("none", dark))
    return "".join(parts)


def kept_html(kept: KeptColumn, dark: bool) -> str:
    if kept.kind == "running":
        return note(kept.note, dark)
    parts = [
        f"<p>{_tag(kept.outcome, colour(_RUN_COLOURS.get(kept.status, kept.status), dark))}</p>",
        note(kept.note, dark),
    ]
    if kept.kind in ("output", "fallback"):
        value = kept.value
        body = pre_text(value) if isinstance(value, str) else json_html(value, dark)
        label = "fallback value" if kept.kind == "fallback" else "output"
        parts.append(bubble("assistant", body, dark, label=label))
    if kept.error:
        parts.append(f'<p style="color:{colour("error", dark)}">{html.escape(kept.error)}</p>')
    return "".join(parts)


# ---- the three views of a turn -------------------------------------------------------------


def final_call_html(last: Step | None, dark: bool) -> str:
    if last is None:
        return note("No model call yet.", dark)
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


def streamed_html(
    steps: Sequence[Step], tool_total: int, earlier: int, record: RunRecord | None, dark: bool
) -> str:
    """What an end user's streaming UI showed, in order, cleared candidates struck through:
    ``steps`` a selection of the run's, in order, whose tool steps are listed up to
    ``TOOL_STEPS_SHOWN`` of the run's ``tool_total``; ``earlier``: candidates left out before
    the selection's (a run of 10,000 attempts shows its last ones)."""
    parts: list[str] = []
    if earlier:
        parts.append(note(f"… {earlier:,} earlier candidates not shown", dark))
    tool_lines = 0
    for step in steps:
        if step_kind(step) == "tool call":
            tool_lines += 1
            if tool_lines <= TOOL_STEPS_SHOWN:
                parts.append(note(f"⚙ step {step.index}: {calls_text(step)}", dark))
            continue
        body = candidate_html(candidate(step), dark)
        if step.cleared:
            detail = "shown, then cleared"
            body = f'<div style="text-decoration:line-through">{body}</div>'
        else:
            detail = "still shown" if step.status != "pending" else "streaming"
        parts.append(
            f"<div>{_tag(f'step {step.index} · attempt {step.attempt}', muted(dark))}"
            f" — {html.escape(detail)}</div>{body}"
        )
    if tool_total > TOOL_STEPS_SHOWN:
        parts.append(note(f"… and {tool_total - TOOL_STEPS_SHOWN:,} more tool steps", dark))
    if record is not None and record.status == "fallback" and record.output is not None:
        value = record.output
        body = pre_text(value) if isinstance(value, str) else json_html(value, dark)
        parts.append(bubble("assistant", body, dark, label="fallback", detail="then shown"))
    return "".join(parts) or note("Nothing yet.", dark)
