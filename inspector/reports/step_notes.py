"""The lines under a step in the timeline, as the terminal timeline prints them: the forced
request, each failed verdict's reason in full, validator errors (worded as such: a broken
validator is not the model's failure), a provider error, re-validation flips, and the feedback
injected after the step. The window gives each a row of its own under its step.

``note_count`` is called for every step when a run is opened (100,000 steps): it only counts,
and a step with nothing to say costs a few attribute reads. ``step_notes`` builds the lines
of one step, when its rows are painted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from inspector.core.live import LiveStep
from inspector.core.messages import Message
from inspector.core.records import VERDICT_MARK, Verdict
from inspector.core.revalidate import Flip
from inspector.reports.labels import feedback_label, feedback_text, forced_markers

NoteKind = Literal["forced", "fail", "error", "flip", "feedback"]
NOTE_CHARS = 2_000  # a feedback message longer than this is cut (the step detail has it all)


class Note(NamedTuple):
    kind: NoteKind  # also the colour it is painted in
    text: str


def note_count(live: LiveStep, flips: Sequence[Flip] = ()) -> int:
    """How many notes ``step_notes`` gives for the step (without building them)."""
    count = len(flips) + len(live.feedback)
    if live.forced is not None:
        count += len(forced_markers(live.forced))
    for verdict in live.verdicts:
        if not verdict.ok:
            count += 1
    step = live.step
    if step is not None and step.status == "error" and step.error:
        count += 1
    return count


def step_notes(live: LiveStep, flips: Sequence[Flip] = ()) -> list[Note]:
    """The step's notes, in reading order: what the request was forced to do, what went wrong
    with the answer, what re-validation changed, then the feedback sent for the next attempt."""
    notes: list[Note] = []
    for _, tip in forced_markers(live.forced):  # one line each: short enough to read whole
        notes.append(Note("forced", f"⚑ forced: {tip[:1].lower()}{tip[1:]}"))
    step = live.step
    if step is not None and step.status == "error" and step.error:
        notes.append(Note("error", f"! error: {_one_line(step.error)}"))
    for verdict in live.verdicts:
        if not verdict.ok:
            notes.append(verdict_note(verdict))
    notes += [Note("flip", flip_note(flip)) for flip in flips]
    notes += [Note("feedback", feedback_note(message)) for message in live.feedback]
    return notes


def verdict_note(verdict: Verdict) -> Note:
    """``✗ no_markdown: found '*' at 0``; an ``error`` verdict says the validator broke."""
    reason = _one_line(verdict.reason)
    if verdict.status == "error":
        where = ""
        if verdict.location is not None:
            where = f" ({verdict.location.file}:{verdict.location.line})"
        text = f"! validator error in {verdict.validator}{where}: {reason or 'no message'}"
        return Note("error", f"{text} — the validator broke, not the model's failure")
    return Note("fail", f"{VERDICT_MARK['fail']} {verdict.validator}: {reason or 'failed'}")


def flip_note(flip: Flip) -> str:
    """``⇄ max_length: pass → fail``, ``+ new verdict no_cjk: fail``, ``− dropped verdict
    max_length (was pass)``: what re-validating the step changed."""
    if flip.before is None:
        return f"+ new verdict {flip.validator}: {flip.after}"
    if flip.after is None:
        return f"− dropped verdict {flip.validator} (was {flip.before})"
    return f"⇄ {flip.validator}: {flip.before} → {flip.after}"


def feedback_note(message: Message) -> str:
    """``↳ feedback (user): Plain text only…``, on one line."""
    return feedback_label(message.role, _one_line(feedback_text(message)))


def _one_line(text: str) -> str:
    return " ".join(text[: NOTE_CHARS * 2].split())[:NOTE_CHARS]


class StepNotes:
    """``step_notes`` of the steps whose note rows are painted, kept while the step, its
    verdicts, feedback and flips are the same objects (a page paints each note row once per
    column). At most ``kept`` steps at a time."""

    def __init__(self, kept: int = 2_000) -> None:
        self._kept = kept
        self._notes: dict[int, tuple[object, object, object, object, list[Note]]] = {}

    def of(self, live: LiveStep, flips: Sequence[Flip], number: int) -> Note | None:
        """The step's ``number``-th note (1-based), or None when it has fewer."""
        kept = self._notes.get(live.index)
        if (
            kept is None
            or kept[0] is not live.step
            or kept[1] is not live.verdicts
            or kept[2] is not live.feedback
            or kept[3] is not flips
        ):
            if len(self._notes) >= self._kept:
                self._notes.clear()
            notes = step_notes(live, flips)
            kept = self._notes[live.index] = (live.step, live.verdicts, live.feedback, flips, notes)
        notes = kept[4]
        return notes[number - 1] if 0 < number <= len(notes) else None
