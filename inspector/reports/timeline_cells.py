"""What the timeline's cells say, as plain text: output previews, the markers of forced steps,
verdict lines and re-validation flips (the item model and the delegate show them)."""

from __future__ import annotations

from inspector.core.live import LiveStep
from inspector.core.records import VERDICT_MARK, Forced, Verdict
from inspector.core.revalidate import Flip

PREVIEW_CHARS = 120
CLEARED_TIP = "Cleared: a streaming UI showed this rejected output, then removed it."
FLIP_LABEL = "flipped"


def flip_chip(flip: Flip) -> str:
    """The timeline chip of a flip: the validator and its verdict now (``⇄ no_markdown ✓``)."""
    return f"⇄ {flip.validator} {VERDICT_MARK.get(flip.after or '', '–')}"


def flip_line(flip: Flip) -> str:
    """``no_markdown: fail → pass`` ("-": the validator did not judge the step on that side)."""
    return f"{flip.validator}: {flip.before or '-'} → {flip.after or '-'}"


def forced_markers(forced: Forced | None) -> list[tuple[str, str]]:
    """(label, tooltip) per way the loop forced a step's request (B2/B3)."""
    if forced is None:
        return []
    markers = []
    choice = forced.tool_choice
    if choice == "none":
        markers.append(("tools off", "Tools disabled on this step (tool_choice: none)"))
    elif choice == "required":
        markers.append(("tool required", "A tool call was required (tool_choice: required)"))
    elif isinstance(choice, dict):
        name = str(choice.get("name", "?"))
        markers.append((f"{name} pinned", f"tool_choice pinned to the {name} tool"))
    if forced.instruction_appended:
        markers.append(
            ("+instruction", "The final-step instruction was appended to the system prompt")
        )
    return markers


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
