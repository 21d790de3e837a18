"""on_validator_error as a pure function: only ``fail`` verdicts blame the model."""

from __future__ import annotations

import pytest

from inspector.core.policy import Policy
from inspector.core.records import Verdict
from inspector.core.verdict_policy import blames_model, broken, broken_message, decide

PASS = Verdict.passed("short")
FAIL = Verdict.failed("no_bold", "found '*' at 0", "Plain text only.")
ERROR = Verdict.errored("flaky", "ValueError: bad token")


@pytest.mark.parametrize("on_error", ["fail", "retry", "ignore"])
def test_a_real_failure_rejects_whatever_the_policy(on_error: str) -> None:
    assert decide([ERROR, FAIL], on_error) == "reject"
    assert decide([PASS, FAIL], on_error) == "reject"


@pytest.mark.parametrize("on_error", ["fail", "retry", "ignore"])
def test_passing_verdicts_are_accepted(on_error: str) -> None:
    assert decide([PASS], on_error) == "accept"
    assert decide([], on_error) == "accept"


@pytest.mark.parametrize(
    ("on_error", "decision"),
    [("fail", "validator_error"), ("retry", "validator_error"), ("ignore", "accept")],
)
def test_only_broken_validators_follow_the_policy(on_error: str, decision: str) -> None:
    assert decide([PASS, ERROR], on_error) == decision


def test_errors_do_not_blame_the_model() -> None:
    assert not blames_model([PASS, ERROR])
    assert blames_model([ERROR, FAIL])
    assert broken([PASS, ERROR, FAIL]) == [ERROR]


def test_the_message_names_each_broken_validator() -> None:
    two = [ERROR, Verdict.errored("slow", "timed out after 5 s")]
    assert broken_message(two) == (
        "validator flaky broke: ValueError: bad token; validator slow broke: timed out after 5 s"
    )


def test_the_default_is_fail_and_bad_values_are_refused() -> None:
    assert Policy().on_validator_error == "fail"
    with pytest.raises(ValueError, match="on_validator_error"):
        Policy(on_validator_error="explode")  # type: ignore[arg-type]
