"""What the Attempts tab says, Qt-free: one column per attempt of a turn (its tool steps in
brief, the candidate answer, its verdicts with reasons — failed first — and the feedback that
followed), the kept answer (what the user got: the output, the fallback value or the error),
and which attempts a page shows.

The window turns these into HTML with its colours (``app/detail/attempt_html.py``); the words
are spelled here and in ``labels.py``, so a test reads them without a display.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inspector.core.messages import Message
from inspector.core.records import RunRecord, Step, Verdict, step_kind
from inspector.reports import labels
from inspector.reports.labels import outcome, verdict_label, verdict_words, words

TOOL_STEPS_SHOWN = 12  # an attempt's first tool steps listed in its column
STREAMING_TAIL = 2_000  # characters of a streaming candidate shown until it finishes

CandidateKind = Literal["text", "structured", "tool call", "refusal", "error", "empty", "streaming"]
KeptKind = Literal["output", "fallback", "error", "nothing", "running"]


@dataclass(frozen=True)
class VerdictLine:
    validator: str
    status: str  # pass | fail | error: the colour
    chip: str  # "✗ max_length"
    said: str  # "failed", "passed", "validator error"
    reason: str
    note: str  # for an ``error`` verdict: why it is not the model's failure


@dataclass(frozen=True)
class FeedbackLine:
    role: str
    text: str


@dataclass(frozen=True)
class Candidate:
    kind: CandidateKind
    text: str  # the answer, the refusal, the error, or a short note
    value: Any = None  # a structured output (kind "structured")
    detail: str = ""  # the final-answer tool's name


@dataclass(frozen=True)
class AttemptColumn:
    number: int
    step: int  # the index of its last step: the one a click shows
    status: str  # the last step's status (a StepStatus)
    status_words: str
    cleared: bool
    tool_count: int
    tool_lines: tuple[str, ...]  # "step 1: lookup_contact({...})", the first few
    candidate: Candidate
    verdicts: tuple[VerdictLine, ...]  # failed first, then errors, then passes
    feedback: tuple[FeedbackLine, ...]
    waiting: bool  # still streaming: no verdicts yet


@dataclass(frozen=True)
class KeptColumn:
    kind: KeptKind
    status: str  # the run's status ("" while it runs)
    outcome: str  # "fallback (after validator exhausted)"
    note: str  # a sentence under the outcome
    value: Any = None  # the output or the fallback value (str or structured)
    error: str = ""  # "ValidationError: ..."


ERROR_NOTE = labels.VALIDATOR_ERROR_NOTE
_VERDICT_ORDER = {"fail": 0, "error": 1, "pass": 2}


def calls_text(step: Step) -> str:
    """The tool calls the step's answer made (``labels.calls_text``)."""
    return labels.calls_text(step.response.tool_calls if step.response else ())


def verdict_line(verdict: Verdict) -> VerdictLine:
    return VerdictLine(
        validator=verdict.validator,
        status=verdict.status,
        chip=verdict_label(verdict),
        said=verdict_words(verdict),
        reason=verdict.reason,
        note=ERROR_NOTE if verdict.status == "error" else "",
    )


def verdict_lines(verdicts: Sequence[Verdict]) -> tuple[VerdictLine, ...]:
    """Failed first (what made the attempt fail), then validator errors, then passes; each
    group in the validators' order."""
    ordered = sorted(verdicts, key=lambda v: _VERDICT_ORDER.get(v.status, 1))
    return tuple(verdict_line(v) for v in ordered)


def feedback_line(message: Message) -> FeedbackLine:
    parts = [message.content] if message.content else []
    parts.extend(labels.call_text(c) for c in message.tool_calls or ())
    return FeedbackLine(role=message.role, text="\n".join(parts) or "(no content)")


def candidate(step: Step) -> Candidate:
    """What the attempt offered as its answer: text, a structured output, a refusal, a tool
    call it ended on, nothing, an error — or what has streamed so far."""
    response = step.response
    kind = step_kind(step)
    if step.status == "error":
        return Candidate("error", step.error or "the step failed")
    if kind == "tool call":
        return Candidate("tool call", calls_text(step))
    if response is not None and response.refusal:
        return Candidate("refusal", response.refusal)
    if response is not None and response.tool_calls:  # the synthetic final-answer tool
        calls = response.tool_calls
        values = [c.arguments for c in calls]
        return Candidate("structured", "", values[0] if len(values) == 1 else values, calls[0].name)
    if response is not None and response.text:
        text = response.text
        if step.status == "pending" and len(text) > STREAMING_TAIL:
            skipped = len(text) - STREAMING_TAIL
            text = f"… ({skipped:,} characters so far above) …" + text[-STREAMING_TAIL:]
        return Candidate("text", text)
    if step.status == "pending":
        return Candidate("streaming", "streaming…")
    return Candidate("empty", "empty reply: no text, no tool calls")


def attempt_column(
    last: Step, tool_steps: Sequence[Step] = (), tool_count: int = 0, cleared: bool = False
) -> AttemptColumn:
    """The column of the attempt whose last step is ``last``; ``tool_steps``: its first tool
    steps (of ``tool_count``); ``cleared``: one of its steps was cleared."""
    return AttemptColumn(
        number=last.attempt,
        step=last.index,
        status=last.status,
        status_words=words(last.status),
        cleared=cleared or last.cleared,
        tool_count=tool_count,
        tool_lines=tuple(f"step {s.index}: {calls_text(s)}" for s in tool_steps[:TOOL_STEPS_SHOWN]),
        candidate=candidate(last),
        verdicts=verdict_lines(last.verdicts),
        feedback=tuple(feedback_line(m) for m in last.feedback),
        waiting=last.status == "pending",
    )


def attempt_columns(steps: Sequence[Step]) -> list[AttemptColumn]:
    """Every attempt of ``steps`` (a whole run's, in order) as a column: for reports and tests;
    the window builds only the columns it shows."""
    groups: list[list[Step]] = []
    for step in steps:
        if not groups or groups[-1][0].attempt != step.attempt:
            groups.append([])
        groups[-1].append(step)
    columns = []
    for group in groups:
        tools = [s for s in group[:-1] if step_kind(s) == "tool call"]
        cleared = any(s.cleared for s in group)
        columns.append(attempt_column(group[-1], tools, len(tools), cleared))
    return columns


def kept_column(record: RunRecord | None) -> KeptColumn:
    """What the user got from the turn: the accepted output, the fallback value (named as the
    handler's, not the model's), or the error."""
    if record is None:
        return KeptColumn("running", "", "running", "The run is in progress.")
    said = outcome(record.status, record.termination, record.fallback_trigger)
    error = f"{record.error.type}: {record.error.message}" if record.error is not None else ""
    if record.status == "fallback":
        note = "The invalid-output handler's fallback value, not the model's answer."
        return KeptColumn("fallback", record.status, said, note, record.output, error)
    if record.output is not None and record.status == "succeeded":
        return KeptColumn("output", record.status, said, "The accepted answer.", record.output)
    if error:
        return KeptColumn(
            "error", record.status, said, "No answer: the run ended in an error.", None, error
        )
    if record.output is not None:
        return KeptColumn("output", record.status, said, "The answer kept.", record.output)
    return KeptColumn("nothing", record.status, said, "No answer was kept.")


# ---- paging ---------------------------------------------------------------------------------


def page_label(first: int, shown: int, total: int) -> str:
    """``attempts 4–6 of 12`` (``first`` 0-based); ``attempt 2 of 2``; ``no attempts yet``."""
    if total == 0:
        return "no attempts yet"
    last = min(total, first + max(shown, 1))
    if last - first <= 1:
        return f"attempt {first + 1:,} of {total:,}"
    return f"attempts {first + 1:,}–{last:,} of {total:,}"


def page_start(first: int, per_page: int, total: int, selected: int | None) -> int:
    """Where a page of ``per_page`` columns starts so that it is full where it can be and shows
    ``selected`` (0-based, None: no selection), moving as little as it can from ``first``."""
    per_page = max(1, per_page)
    if selected is not None:
        if selected < first:
            first = selected
        elif selected >= first + per_page:
            first = selected - per_page + 1
    return max(0, min(first, total - per_page))
