"""The words every view uses for a run and its steps: statuses, terminations, why a run ended and
the markers of forced steps. The terminal timeline, the HTML report, the compare text and the
window all spell them from here, so a rename happens once (see docs/architecture.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from inspector.core.messages import Message, ToolCall
from inspector.core.records import VERDICT_MARK, Forced, Step, Verdict
from inspector.core.records import step_kind as core_step_kind


def words(value: str | None) -> str:
    """A status or termination as prose: ``failed_validation`` → ``failed validation``."""
    return (value or "").replace("_", " ")


def why_ended(termination: str | None, fallback_trigger: str | None = None) -> str:
    """``step_cap``, or ``max_attempts → fallback`` when a fallback answered in the model's
    place (the record's own tokens: pass it through ``words`` for prose)."""
    if fallback_trigger:
        return f"{fallback_trigger} → {termination}"
    return str(termination or "")


def outcome(status: str, termination: str | None, fallback_trigger: str | None = None) -> str:
    """``failed (step cap)``: the status and, when it adds something, what ended the run —
    never ``cancelled (cancelled)`` or ``succeeded (stop)``; a fallback names what it replaced:
    ``fallback (after validator exhausted)``."""
    if status == "fallback":
        return f"fallback (after {words(fallback_trigger)})" if fallback_trigger else status
    if not termination or termination == status or (status, termination) == ("succeeded", "stop"):
        return status
    return f"{status} ({words(termination)})"


def step_budget(used: int, cap: int | None) -> str:
    """``4 steps of 8 max``: the steps a run took against its step cap (``max_steps``, B2);
    ``1 step`` when the cap is unknown."""
    taken = f"{used:,} step{'s' * (used != 1)}"
    return f"{taken} of {cap:,} max" if cap else taken


def step_cap(cap: int | None) -> str:
    """``8 steps max``: the cap of a run not finished yet ("" when unknown)."""
    return f"{cap:,} step{'s' * (cap != 1)} max" if cap else ""


def missing_text(step: Step) -> str:
    """What a step's empty Text box says: "nothing yet" only while the step streams."""
    if step.status == "pending":
        return "Text: nothing yet"
    if step.response is not None and step.response.tool_calls:
        return "Text: none — the model answered with tool calls only"
    return "Text: none"


def step_note(step: Step) -> str:
    """A sentence a step's status needs beside it ("" when none): a ``validator_error`` step was
    rejected by broken validators only — the model did not fail."""
    if step.status == "validator_error":
        return "a validator broke (raised or timed out): not the model's failure, no feedback"
    return ""


def step_kind(step: Step) -> str:
    """tool call | final answer | empty | error | … — what the step was (core's kind, with the
    final answer spelled out for readers of a report)."""
    kind = core_step_kind(step)
    return "final answer" if kind == "final" else kind


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
    elif choice:
        markers.append((f"tool_choice {choice}", f"tool_choice set to {choice}"))
    if forced.instruction_appended:
        markers.append(
            ("+instruction", "The final-step instruction was appended to the system prompt")
        )
    return markers


def short_marker(label: str) -> str | None:
    """A marker chip's words where its label does not fit the chip: ``pinned`` for ``<tool>
    pinned`` (the tool is named in the note row under the step); None: no shorter form."""
    if label.endswith(" pinned") and label != "pinned":
        return "pinned"
    return None


def forced_label(forced: Forced | None) -> str:
    """``forced: tools off +instruction`` (B2) or ``forced: final_answer pinned`` (B3); "" if
    the loop did not force the step."""
    if forced is None:
        return ""
    labels = [label for label, _ in forced_markers(forced)]
    return "forced: " + " ".join(labels) if labels else "forced"


def call_text(call: ToolCall) -> str:
    """``lookup_contact({"name": "Sam"})``: a tool call as every view prints it."""
    return f"{call.name}({call.arguments_json()})"


def calls_text(calls: Iterable[ToolCall]) -> str:
    """``lookup_contact({...}), send_sms({...})``: a step's tool calls on one line."""
    return ", ".join(call_text(call) for call in calls)


def feedback_text(message: Message) -> str:
    """A feedback message's words: its content, or the names of the calls that carry it (a
    tool-role feedback's assistant message has no content of its own)."""
    return message.content or ", ".join(call.name for call in message.tool_calls or ())


def feedback_label(role: str, text: str) -> str:
    """``↳ feedback (user): Plain text only…``: the line under a step, terminal and window."""
    return f"↳ feedback ({role}): {text}"


def verdict_label(verdict: Verdict) -> str:
    """``✓ no_markdown``: a verdict's mark and its validator (a chip's text)."""
    return f"{VERDICT_MARK[verdict.status]} {verdict.validator}"


VERDICT_WORDS = {"pass": "passed", "fail": "failed", "error": "validator error"}
# Said beside an ``error`` verdict wherever it is shown in full (the Attempts tab's columns).
VALIDATOR_ERROR_NOTE = "the validator raised or timed out — not the model's failure"


def verdict_words(verdict: Verdict) -> str:
    """``failed``, ``passed`` or ``validator error`` — an ``error`` verdict is a validator that
    raised or timed out, never the model's failure, and is never worded as one."""
    return VERDICT_WORDS.get(verdict.status, verdict.status)


# How a turn ended, as a sentence for its reader (the outcome header above the timeline). By
# termination; a status the termination does not explain falls back on ``outcome``.
_ENDINGS = {
    "stop": "The model's answer was accepted.",
    "validator_exhausted": "Every attempt failed validation: no answer was accepted.",
    "step_cap": "The step cap was reached before an answer was accepted.",
    "refusal": "The model refused to answer.",
    "empty_final": "The model's final reply was empty.",
    "validator_stop": "A validator stopped the turn.",
    "validator_error": "A validator broke (raised or timed out): a validator error, "
    "not the model's failure.",
    "provider_error": "The model call failed: the provider returned an error.",
    "cancelled": "Cancelled before the turn ended.",
}
_FALLBACK_REASONS = {
    "validator_exhausted": "every attempt failed validation",
    "step_cap": "the step cap was reached",
    "refusal": "the model refused",
    "empty_final": "the final reply was empty",
    "validator_stop": "a validator stopped the turn",
}


def ending(status: str, termination: str | None, fallback_trigger: str | None = None) -> str:
    """How the turn ended, in a sentence: ``Every attempt failed validation: no answer was
    accepted.``; a fallback says what it replaced and that it is not the model's answer."""
    if status == "fallback":
        why = _FALLBACK_REASONS.get(fallback_trigger or "", words(fallback_trigger) or "")
        lead = f"No valid answer ({why})" if why else "No valid answer"
        return f"{lead}: the fallback value was used instead of the model's."
    if status == "interrupted":
        return "Interrupted: the app stopped while the turn ran."
    if status == "succeeded" and termination == "empty_final":
        return "The model's final reply was empty, and accepted as it is."
    if status == "succeeded" and termination == "validator_stop":
        return "A validator stopped the turn and accepted the answer."
    sentence = _ENDINGS.get(termination or "")
    if sentence is None:
        ended = outcome(status, termination, fallback_trigger)
        return f"{ended[:1].upper()}{ended[1:]}." if ended else ""
    if status == "error" and termination not in ("provider_error", "validator_error"):
        return f"{sentence} Then the turn broke on an error."
    return sentence


def value_text(value: Any, indent: int | None = 2) -> str:
    """A value the user got or a structured candidate as text: strings as they are, the rest
    as JSON (``indent=None``: on one line)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
