"""What the timeline's cells say, as plain text: output previews, the markers of forced steps,
verdict lines and re-validation flips (the item model and the delegate show them), and the
``PaintCell`` a cell is painted from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from inspector.core.live import LiveStep
from inspector.core.records import VERDICT_MARK, Step, Verdict
from inspector.core.revalidate import Flip
from inspector.reports.labels import calls_text, forced_markers

__all__ = ["forced_markers"]  # kept here too: the timeline cells' markers

PREVIEW_CHARS = 120
CLEARED_TIP = "Cleared: a streaming UI showed this rejected output, then removed it."
FLIP_LABEL = "flipped"


class PaintCell(NamedTuple):
    """What the delegate paints in one cell, read with a single call: a cell read role by role
    cost ~11 calls into Python (scrolling 100,000 rows stalled on them). A named tuple: one is
    built for every painted cell, so it must be cheap to make."""

    text: str  # the cell's display text; a header's "Attempt N · k steps[ · cleared]"
    status: str  # the step's status; a header's: its attempt's last step's
    cleared: bool = False
    header: bool = False
    right: bool = False  # right-aligned (numbers); else left
    flips: Sequence[Flip] = ()  # the model's own list: read, never changed
    verdicts: Sequence[Verdict] = ()  # the Verdicts column only
    markers: Sequence[tuple[str, str]] = ()  # the Markers column only: (label, tooltip)
    fraction: float | None = None  # the Latency column only: of the slowest step
    note: str = ""  # a note row's kind (reports/step_notes.NoteKind); text is the note's line


def flip_chip(flip: Flip) -> str:
    """The timeline chip of a flip: the validator and its verdict now (``⇄ no_markdown ✓``)."""
    return f"⇄ {flip.validator} {VERDICT_MARK.get(flip.after or '', '–')}"


def flip_line(flip: Flip) -> str:
    """``no_markdown: fail → pass`` ("-": the validator did not judge the step on that side)."""
    return f"{flip.validator}: {flip.before or '-'} → {flip.after or '-'}"


def output_preview(live: LiveStep) -> str:
    """One line saying what the step produced (so far, while it streams)."""
    step = live.step
    if step is not None:
        if step.status == "error":
            return f"error: {step.error or ''}"
        response = step.response
        if response is None:
            return step.error or ""
        if response.refusal:
            return f"refusal: {response.refusal}"
        if response.tool_calls:
            return calls_text(response.tool_calls)
        if step.status == "empty":
            return "(an empty reply: no text, no tool calls)"
        text = response.text
    else:
        if live.calls:
            return ", ".join(
                f"{c.name}({''.join(c.arguments)})" for _, c in sorted(live.calls.items())
            )
        # Join only as many streamed pieces as the preview needs.
        pieces: list[str] = []
        size = 0
        for piece in live.text:
            pieces.append(piece)
            size += len(piece)
            if size > PREVIEW_CHARS:
                break
        text = "".join(pieces)
    text = " ".join(text[: PREVIEW_CHARS * 2].split())
    return text[:PREVIEW_CHARS]


def verdict_line(verdict: Verdict) -> str:
    """``✓ no_markdown: reason`` (the status when there is no reason)."""
    return f"{VERDICT_MARK[verdict.status]} {verdict.validator}: {verdict.reason or verdict.status}"


class Previews:
    """``output_preview`` of finished steps, kept (they never change; a tool call's preview
    serialises its arguments, the dearest part of a painted row); a streaming step's is made
    afresh. At most ``kept`` at a time: a few pages of rows scrolled through."""

    def __init__(self, kept: int = 5_000) -> None:
        self._kept = kept
        self._previews: dict[int, tuple[Step, str]] = {}  # step index -> (its step, preview)

    def of(self, live: LiveStep) -> str:
        step = live.step
        if step is None:
            return output_preview(live)
        cached = self._previews.get(live.index)
        if cached is None or cached[0] is not step:
            if len(self._previews) >= self._kept:
                self._previews.clear()
            cached = self._previews[live.index] = (step, output_preview(live))
        return cached[1]
