"""The one rule for values in a scenario (docs/engine.md "Values"): a number is text where text
is expected, anywhere; counts, numbers and flags are strict (a boolean is not a count) and
bounded; a scenario path that is no regular file is bad input, refused before it is read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.scenario import MAX_SCENARIO_BYTES, load_scenario, scenario_from_dict

BASE: dict[str, Any] = {
    "name": "values",
    "prompt": {"user": "hi"},
    "script": [{"text": "hello"}],
}


def load(data: dict[str, Any], *overrides: str) -> Any:
    return scenario_from_dict(
        {**BASE, **data}, source="v.toml", base_dir=Path("."), overrides=list(overrides)
    )


def error(data: dict[str, Any], *overrides: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load(data, *overrides)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    "field",
    ["policy.max_attempts", "policy.max_steps", "model.max_tokens", "validators.0.max"],
)
@pytest.mark.parametrize("value", ["true", "false"])
def test_a_boolean_is_not_a_count_in_set_or_in_the_file(field: str, value: str) -> None:
    data = {"validators": [{"kind": "max_length", "max": 10}]}
    assert "valid integer" in error(data, f"{field}={value}")
    section, key, *_ = field.split(".")
    if section == "validators":
        in_file = {"validators": [{"kind": "max_length", "max": value == "true"}]}
    else:
        in_file = {section: {key: value == "true"}}
    assert "valid integer" in error(in_file)


def test_counts_are_strict_whole_numbers() -> None:
    assert "valid integer" in error({"policy": {"max_attempts": 2.0}})
    assert "valid integer" in error({"policy": {"max_attempts": "2"}})
    assert load({}, "policy.max_attempts=2").policy.max_attempts == 2


@pytest.mark.parametrize("field", ["validator_timeout_s", "tool_timeout_s"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e300", "true"])
def test_time_limits_are_finite_and_bounded(field: str, value: str) -> None:
    message = error({}, f"policy.{field}={value}")
    assert message.startswith(f"v.toml: policy.{field}: ")


def test_flags_are_true_or_false_only() -> None:
    assert "valid boolean" in error({"model": {"stream": 1}})
    assert "valid boolean" in error({"policy": {"keep_failed_attempts": "yes"}})


def test_a_number_is_text_wherever_text_is_expected() -> None:
    sc = load(
        {
            "model": {"name": 2024, "headers": {"X-Build": 7}},
            "prompt": {"system": 1, "messages": [{"role": "user", "content": 42}]},
            "policy": {"final_step_instruction": 3.5},
            "validators": [{"kind": "regex_absent", "pattern": 123, "feedback": 9}],
        },
        "prompt.user=5",
    )
    assert (sc.model.name, sc.model.headers["X-Build"], sc.prompt.system) == ("2024", "7", "1")
    assert sc.prompt.messages[0].content == "42" and sc.prompt.user == "5"
    assert sc.policy.final_step_instruction == "3.5"
    assert (sc.validators[0].pattern, sc.validators[0].feedback) == ("123", "9")


def test_a_boolean_is_not_text() -> None:
    assert "valid string" in error({"model": {"name": True}})
    assert "valid string" in error({"policy": {"final_step_instruction": False}})


# ---- scenario paths -------------------------------------------------------------------------


def path_error(path: Path | str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    assert path_error(fifo).endswith("not a regular file (a device, FIFO or socket)")


def test_an_endless_device_is_refused() -> None:
    assert path_error("/dev/zero") == "/dev/zero: not a regular file (a device, FIFO or socket)"


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(MAX_SCENARIO_BYTES + 1)  # sparse: no disk used
    assert "a scenario file is at most 4 MB" in path_error(big)


def test_a_nul_byte_in_the_path_or_a_function_reference(tmp_path: Path) -> None:
    assert "NUL byte" in path_error("a\0b.toml")
    from inspector.core.loading import split_ref

    with pytest.raises(ScenarioError, match="cannot contain a NUL byte"):
        split_ref("v\0.py:check", "validators[0].function")


def test_a_validators_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    from inspector.core.revalidate import read_validator_file

    fifo = tmp_path / "validators.toml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match="not a regular file"):
        read_validator_file(fifo, load({}))
