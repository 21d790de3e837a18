"""What the end user's conversation keeps of a failed attempt (the record's ``transcript``), as a
pure function: the clearing rule of B1.

A failed attempt is *cleared* only when something replaces it — a retry follows, or a fallback is
used — and ``clear_failed_attempts`` is on. When the turn ends on it (a handler that raises,
``ctx.stop()``, an invalid fallback, a broken hook) it is what the end user saw last, so it stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.messages import Message, assistant
from inspector.core.policy import Policy


@dataclass(frozen=True)
class Settled:
    cleared: bool  # the step's ``cleared`` flag; ``AttemptCleared`` is published when True
    transcript: tuple[Message, ...]  # what the transcript gains


def settle_failed_attempt(
    shown: str | None,
    feedback: Sequence[Message] | None,
    *,
    replaced: bool,
    policy: Policy,
) -> Settled:
    """``shown``: what the end user saw of the rejected candidate (its text, or the output it
    stood for; None for an empty reply, which showed nothing and so is never cleared).
    ``feedback``: what was injected for the retry (None when no retry follows). ``replaced``: a
    retry or a fallback takes the attempt's place.

    A failed output that is not cleared stays in the transcript. User/system feedback joins it
    only with ``clear_failed_attempts = false``; tool-role feedback is model plumbing, never shown.
    """
    cleared = replaced and policy.clear_failed_attempts and shown is not None
    gained: list[Message] = []
    if shown is not None and not cleared:
        gained.append(assistant(shown))
    if feedback and not policy.clear_failed_attempts and policy.feedback_role != "tool":
        gained.extend(feedback)
    return Settled(cleared=cleared, transcript=tuple(gained))
