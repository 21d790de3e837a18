"""Short words for a step, shared by the compare table and the HTML report."""

from __future__ import annotations

from inspector.core.records import Forced, Step
from inspector.core.records import step_kind as core_step_kind


def step_kind(step: Step) -> str:
    """tool call | final answer | empty | error | … — what the step was (core's kind, with the
    final answer spelled out for readers of a report)."""
    kind = core_step_kind(step)
    return "final answer" if kind == "final" else kind


def forced_label(forced: Forced | None) -> str:
    """``forced: tools off +instruction`` (B2) or ``forced: final_answer pinned`` (B3); "" if
    the loop did not force the step."""
    if forced is None:
        return ""
    parts = []
    if forced.tool_choice == "none":
        parts.append("tools off")
    elif isinstance(forced.tool_choice, dict):
        parts.append(f"{forced.tool_choice.get('name')} pinned")
    elif forced.tool_choice:
        parts.append(f"tool_choice {forced.tool_choice}")
    if forced.instruction_appended:
        parts.append("+instruction")
    return "forced: " + " ".join(parts) if parts else "forced"
