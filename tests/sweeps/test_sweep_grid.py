"""The sweep grid from the command line: --vary products, @file values, preset arms, errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.scenario import parse_override
from inspector.sweeps.grid import (
    build_arms,
    preset_arm,
    refuse_credentials,
    run_seed,
    toml_value,
)


def test_the_grid_is_the_product_of_the_vary_lists() -> None:
    arms = build_arms(
        ["policy.feedback_history=accumulate,latest", "policy.feedback_role=user,tool"], []
    )
    assert [a.name for a in arms] == [
        "feedback_history=accumulate feedback_role=user",
        "feedback_history=accumulate feedback_role=tool",
        "feedback_history=latest feedback_role=user",
        "feedback_history=latest feedback_role=tool",
    ]
    assert arms[1].overrides == ["policy.feedback_history=accumulate", "policy.feedback_role=tool"]


def test_file_values_are_read_as_strings_exactly(tmp_path: Path) -> None:
    (tmp_path / "short.txt").write_text('Be brief.\n"Quote" \\ 42', encoding="utf-8")
    (tmp_path / "long.txt").write_text("true", encoding="utf-8")  # TOML would read a bool
    arms = build_arms(["prompt.system=@short.txt,@long.txt"], [], tmp_path)
    assert [a.name for a in arms] == ["system=short.txt", "system=long.txt"]
    assert [parse_override(a.overrides[0])[1] for a in arms] == ['Be brief.\n"Quote" \\ 42', "true"]


def test_preset_arms_set_their_tables_fields(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(
        'name = "x"\n[policy]\nfeedback_history = "latest"\nmax_attempts = 5\n'
        'fallback = { body = "hi", n = [1, 2] }\n',
        encoding="utf-8",
    )
    arm = preset_arm("latest=p.toml", tmp_path)
    assert arm.name == "latest"
    values = {parse_override(o)[0][1]: parse_override(o)[1] for o in arm.overrides}
    assert values == {
        "feedback_history": "latest",
        "max_attempts": 5,
        "fallback": {"body": "hi", "n": [1, 2]},
    }
    arms = build_arms([], ["latest=p.toml"], tmp_path)
    assert [a.name for a in arms] == ["base", "latest"]  # compared with the scenario as is


@pytest.mark.parametrize(
    ("varies", "presets", "message"),
    [
        (["policy.max_attempts"], [], "expected SECTION.KEY=V1,V2"),
        (["policy.max_attempts=1,,2"], [], "an empty value"),
        (["policy.max_attempts=1,1"], [], "value '1' is given twice"),
        (["policy.a=1", "policy.a=2"], [], "policy.a: the field is varied twice"),
        (["prompt.system=@missing.txt"], [], "@missing.txt: cannot read"),
        ([], ["x"], "expected NAME=preset.toml"),
        ([], ["x=missing.toml"], "--arm x: missing.toml: cannot read"),
        ([], ["base=p.toml"], "--arm base: two arms have this name"),
    ],
)
def test_bad_grids_say_what_in_one_line(
    tmp_path: Path, varies: list[str], presets: list[str], message: str
) -> None:
    (tmp_path / "p.toml").write_text("[policy]\nmax_attempts = 2\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=message) as info:
        build_arms(varies, presets, tmp_path)
    assert "\n" not in str(info.value)


def test_toml_value_round_trips() -> None:
    value = {"s": 'a "b"\n', "i": 3, "f": 0.5, "b": False, "l": ["x", 1], "t": {}}
    assert tomllib.loads(f"v = {toml_value(value)}")["v"] == value


def test_run_seeds_are_fixed_by_sweep_arm_and_repetition() -> None:
    assert run_seed(1, "a", 0) == run_seed(1, "a", 0)
    assert (
        len({run_seed(1, "a", 0), run_seed(1, "b", 0), run_seed(1, "a", 1), run_seed(2, "a", 0)})
        == 4
    )


@pytest.mark.parametrize(
    "override",
    [
        "model.headers.Authorization=Bearer abcdefghijkl",
        "model.headers.x-api-key=abc",
        "prompt.system=sk-abcdefghijklmnopqrstuvwxyz",
    ],
)
def test_a_sweep_takes_no_credential(override: str) -> None:
    # The spec is stored for --resume: a key there would reach the store and the exports.
    with pytest.raises(ScenarioError, match="a sweep stores its settings, so it takes no"):
        refuse_credentials(["policy.max_attempts=2", override])
    refuse_credentials(["model.api_key_env=OPENAI_API_KEY", "model.headers.x-trace=1"])
