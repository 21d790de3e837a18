"""What a set of verdicts means for the turn under ``[policy] on_validator_error``.

A verdict with status ``error`` says the *validator* broke (it raised or ran past its time
limit), not that the model's answer was wrong. Only ``fail`` verdicts blame the model; errors
are handled by the policy (docs/engine.md "Validator errors"):

- ``fail`` (default): the turn ends at once with status ``error``, termination
  ``validator_error`` — a broken validator is the developer's bug, and retrying would spend model
  calls on a verdict that cannot be trusted;
- ``retry``: the attempt is sampled again with no feedback (nothing to tell the model);
- ``ignore``: the error verdicts are recorded but do not block the candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from inspector.core.records import Verdict

Decision = Literal["accept", "reject", "validator_error"]


def blames_model(verdicts: Sequence[Verdict]) -> bool:
    """True when at least one verdict is a real failure of the model's answer."""
    return any(v.status == "fail" for v in verdicts)


def broken(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts of validators that raised or timed out."""
    return [v for v in verdicts if v.status == "error"]


def decide(verdicts: Sequence[Verdict], on_validator_error: str) -> Decision:
    """``accept`` the candidate, ``reject`` it (the model failed: retry with feedback), or
    ``validator_error`` (only broken validators objected: ``on_validator_error`` decides)."""
    if blames_model(verdicts):
        return "reject"
    if not broken(verdicts) or on_validator_error == "ignore":
        return "accept"
    return "validator_error"


def broken_message(verdicts: Sequence[Verdict]) -> str:
    """``validator no_cjk broke: ZeroDivisionError: division by zero`` (joined by ``; ``)."""
    parts = [f"validator {v.validator} broke: {v.reason}" for v in broken(verdicts)]
    return "; ".join(parts) or "a validator broke"
