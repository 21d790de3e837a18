"""What the timeline's cells say, as plain text: output previews, the markers of forced steps,
verdict lines and re-validation flips (the item model and the delegate show them)."""

from __future__ import annotations

from inspector.core.live import LiveStep
from inspector.core.records import VERDICT_MARK, Verdict
from inspector.core.revalidate import Flip
from inspector.reports.labels import forced_markers

__all__ = ["forced_markers"]  # kept here too: the timeline cells' markers

PREVIEW_CHARS = 120
CLEARED_TIP = "Cleared: a streaming UI showed this rejected output, then removed it."
FLIP_LABEL = "flipped"


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
            return ", ".join(f"{c.name}({c.arguments_json()})" for c in response.tool_calls)
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
