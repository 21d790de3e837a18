"""B1 as pure functions: what the model sees after a failed attempt.

The loop keeps the conversation as an ordered list of blocks: ``Work`` (tool round trips, always
part of the conversation) and ``FailedAttempt`` (a rejected candidate and the feedback it drew).
``compose_history`` applies ``feedback_history`` and ``keep_failed_attempts`` to those blocks; it
runs only after a failure, so ordinary steps just append (per-step cost stays flat).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.messages import Message, ToolCall, assistant, tool_result
from inspector.core.policy import Policy
from inspector.core.records import Verdict

DEFAULT_FEEDBACK = "Your previous answer was rejected. Try again."
REJECTED = "Rejected by validation."
FEEDBACK_TOOL = "validation_feedback"


@dataclass(frozen=True)
class Work:
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class FailedAttempt:
    attempt: int
    candidate: tuple[Message, ...]  # the rejected assistant message (+ results pairing its calls)
    feedback: tuple[Message, ...]  # what was injected for the next attempt


Block = Work | FailedAttempt


def feedback_text(verdicts: Sequence[Verdict]) -> str:
    """The failing verdicts' feedback, one per line, de-duplicated; error verdicts add nothing
    (the model cannot fix a broken validator)."""
    lines: list[str] = []
    for v in verdicts:
        if not v.ok and v.status == "fail":
            text = v.feedback or v.reason
            if text and text not in lines:
                lines.append(text)
    return "\n".join(lines) or DEFAULT_FEEDBACK


def failed_attempt(
    attempt: int,
    candidate: Message | None,
    judged_call: ToolCall | None,
    text: str,
    policy: Policy,
) -> FailedAttempt:
    """Builds the block for a rejected candidate under ``feedback_role`` / ``keep_failed_attempts``.

    Every tool call the kept candidate made gets a result, so the history stays well-formed for
    providers that insist on it. With ``feedback_role = "tool"`` the feedback *is* the result of the
    judged final-answer call when the candidate is kept; otherwise it is a synthetic
    ``validation_feedback`` call + result pair.
    """
    calls = candidate.tool_calls or () if candidate else ()
    keep = policy.keep_failed_attempts and candidate is not None
    feedback: tuple[Message, ...] = ()
    pairing: list[Message] = []
    if policy.feedback_history == "none":
        pairing = [tool_result(c.id, REJECTED, c.name) for c in calls]
    elif policy.feedback_role == "tool" and keep and judged_call is not None:
        feedback = tuple(
            tool_result(c.id, text if c.id == judged_call.id else REJECTED, c.name) for c in calls
        )
    else:
        pairing = [tool_result(c.id, REJECTED, c.name) for c in calls]
        if policy.feedback_role == "tool":
            call = ToolCall(id=f"feedback_{attempt}", name=FEEDBACK_TOOL, arguments={})
            feedback = (assistant(None, (call,)), tool_result(call.id, text, FEEDBACK_TOOL))
        else:
            feedback = (Message(role=policy.feedback_role, content=text),)
    kept = (candidate, *pairing) if candidate is not None else ()
    return FailedAttempt(attempt=attempt, candidate=kept, feedback=feedback)


def compose_history(
    prefix: Sequence[Message], blocks: Sequence[Block], policy: Policy
) -> list[Message]:
    """accumulate: every failed attempt and its feedback; latest: only the most recent failed
    attempt and its feedback; none: no feedback (blind retry). Failed candidates appear only when
    ``keep_failed_attempts``; work (tool round trips) always does."""
    last_failed = next((b for b in reversed(blocks) if isinstance(b, FailedAttempt)), None)
    mode = policy.feedback_history
    out = list(prefix)
    for block in blocks:
        if isinstance(block, Work):
            out.extend(block.messages)
            continue
        in_window = mode != "latest" or block is last_failed
        if policy.keep_failed_attempts and in_window:
            out.extend(block.candidate)
        if mode != "none" and in_window:
            out.extend(block.feedback)
    return out
