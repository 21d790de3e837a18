"""The clearing rule as a pure function: what the end user's transcript keeps of a failed
attempt, for every combination that matters."""

from __future__ import annotations

import pytest

from inspector.core.messages import Message, assistant, system, tool_result, user
from inspector.core.policy import Policy
from inspector.core.transcript import Settled, settle_failed_attempt

SHOWN = "**Sam**, 3pm."
FEEDBACK = {
    "user": [user("No asterisks.")],
    "system": [system("No asterisks.")],
    "tool": [tool_result("feedback_1", "No asterisks.", "validation_feedback")],
}


def policy(clear: bool, role: str = "user") -> Policy:
    return Policy.model_validate({"clear_failed_attempts": clear, "feedback_role": role})


@pytest.mark.parametrize("role", ["user", "system", "tool"])
def test_a_retry_replaces_the_attempt(role: str) -> None:
    feedback = FEEDBACK[role]
    cleared = settle_failed_attempt(SHOWN, feedback, replaced=True, policy=policy(True, role))
    assert cleared == Settled(cleared=True, transcript=())
    kept = settle_failed_attempt(SHOWN, feedback, replaced=True, policy=policy(False, role))
    shown_feedback: list[Message] = [] if role == "tool" else feedback  # tool role: plumbing
    assert kept == Settled(cleared=False, transcript=(assistant(SHOWN), *shown_feedback))


@pytest.mark.parametrize("clear", [True, False])
def test_a_fallback_replaces_the_attempt(clear: bool) -> None:
    got = settle_failed_attempt(SHOWN, None, replaced=True, policy=policy(clear))
    expected = (
        Settled(cleared=True, transcript=()) if clear else Settled(False, (assistant(SHOWN),))
    )
    assert got == expected


@pytest.mark.parametrize("clear", [True, False])
def test_the_attempt_the_turn_ends_on_stays(clear: bool) -> None:
    got = settle_failed_attempt(SHOWN, None, replaced=False, policy=policy(clear))
    assert got == Settled(cleared=False, transcript=(assistant(SHOWN),))


@pytest.mark.parametrize("replaced", [True, False])
@pytest.mark.parametrize("clear", [True, False])
def test_an_empty_reply_showed_nothing(replaced: bool, clear: bool) -> None:
    feedback = FEEDBACK["user"] if replaced else None
    got = settle_failed_attempt(None, feedback, replaced=replaced, policy=policy(clear))
    # Never cleared (nothing was shown); its feedback joins the transcript like any other.
    shown_feedback = tuple(feedback or ()) if not clear else ()
    assert got == Settled(cleared=False, transcript=shown_feedback)


def test_a_retry_without_feedback_adds_only_the_kept_reply() -> None:
    got = settle_failed_attempt(SHOWN, [], replaced=True, policy=policy(False))
    assert got == Settled(cleared=False, transcript=(assistant(SHOWN),))
