"""Reading a scenario file before validation (``core/scenario_file.py``): the tables, the same
one-line errors as ``load_scenario``, and ``names_user_code``, the hint that starts a user-code
worker early."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.loop import Turn
from inspector.core.scenario import load_scenario
from inspector.core.scenario_file import names_user_code, read_scenario_file, user_code_targets
from inspector.core.worker import pool
from inspector.core.worker.protocol import Target
from inspector.providers.factory import build_provider
from inspector.resources import demo_names, read_scenario_ref, resolve_scenario

TOOL = {"name": "t", "parameters": {"type": "object"}}


@pytest.mark.parametrize(
    ("data", "overrides", "named"),
    [
        ({}, [], False),
        ({"tools": [{**TOOL, "result": "canned"}]}, [], False),
        ({"validators": [{"kind": "max_length", "max": 3}]}, [], False),
        ({"tools": [{**TOOL, "function": "t.py:f"}]}, [], True),
        ({"validators": [{"kind": "python", "function": "v.py:f"}]}, [], True),
        ({"validators": [{"kind": "python"}]}, [], True),
        ({"policy": {"feedback_builder": "b.py:build"}}, [], True),
        ({"policy": {"fallback_function": "b.py:fall"}}, [], True),
        ({"policy": {"fallback_function": ""}}, [], False),
        ({"tools": "not a list", "validators": [3], "policy": []}, [], False),
        ({}, ["tools.0.function=t.py:f"], True),
        ({}, ["policy.feedback_builder=b.py:build"], True),
        ({}, ["validators.0.kind=python"], True),
        ({}, ["policy.max_attempts=2"], False),
    ],
)
def test_names_user_code(data: dict[str, Any], overrides: list[str], named: bool) -> None:
    assert names_user_code(data, overrides) is named


@pytest.mark.parametrize("name", demo_names())
def test_the_hint_agrees_with_each_demo(name: str) -> None:
    tables = read_scenario_ref(f"demo:{name}")
    scenario = load_scenario(tables.base_dir / f"{name}.toml")
    python = [v for v in scenario.validators if v.kind == "python"]
    uses = bool(python or any(t.function for t in scenario.tools))
    uses = uses or bool(scenario.policy.feedback_builder or scenario.policy.fallback_function)
    assert names_user_code(tables.data) is uses


def test_tables_name_the_source_and_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('name = "x"\n', encoding="utf-8")
    tables = read_scenario_file(path, source="shown.toml")
    assert tables.data == {"name": "x"}
    assert tables.source == "shown.toml"
    assert tables.base_dir == tmp_path.resolve()
    assert read_scenario_ref(str(path)).source == str(path)


@pytest.mark.parametrize("text", ["name = \n", "[model\n"])
def test_a_broken_file_is_the_same_one_line_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as read:
        read_scenario_file(path)
    with pytest.raises(ScenarioError) as loaded:
        load_scenario(path)
    assert str(read.value) == str(loaded.value)
    assert str(read.value).startswith(f"{path}: not valid TOML: ")


def test_reading_imports_no_pydantic_or_engine() -> None:
    code = (
        "import sys, json\n"
        "from inspector.resources import read_scenario_ref\n"
        "read_scenario_ref('demo:retry-feedback')\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    heavy = {"pydantic", "jsonschema", "asyncio", "inspector.core.scenario", "inspector.core.loop"}
    assert loaded.isdisjoint(heavy), loaded & heavy


def _checked_by_a_turn(ref: str, monkeypatch: pytest.MonkeyPatch) -> list[Target]:
    """The targets a turn of ``ref`` checks, in order (``pool.check`` recorded, not run)."""
    seen: list[Target] = []
    monkeypatch.setattr(pool, "check", lambda targets, *a, **k: seen.extend(targets))
    monkeypatch.setattr(pool, "wake", lambda: None)
    scenario = resolve_scenario(ref)
    Turn(scenario, build_provider(scenario), lambda event: None)
    return seen


SCENARIO_WITH_HOOKS = """
name = "hooks"
[prompt]
user = "hi"
[[tools]]
name = "canned"
result = "x"
[[tools]]
name = "from_file"
function = "hooks.py:tool"
[[validators]]
kind = "max_length"
max = 10
[[validators]]
kind = "python"
function = "hooks.py:check"
[policy]
feedback_history = "custom"
feedback_builder = "hooks.py:build"
on_invalid_output = "fallback"
fallback_function = "hooks.py:fall"
[[script]]
text = "done"
"""


@pytest.mark.parametrize("ref", [*(f"demo:{name}" for name in demo_names()), "hooks"])
def test_early_targets_are_the_ones_a_turn_checks(
    ref: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if ref == "hooks":
        ref = str(tmp_path / "hooks.toml")
        Path(ref).write_text(SCENARIO_WITH_HOOKS, encoding="utf-8")
    expected = _checked_by_a_turn(ref, monkeypatch)
    assert user_code_targets(read_scenario_ref(ref)) == expected
    if ref.endswith("hooks.toml"):
        assert len(expected) == 4


def test_no_early_targets_when_an_override_may_change_them(tmp_path: Path) -> None:
    path = tmp_path / "hooks.toml"
    path.write_text(SCENARIO_WITH_HOOKS, encoding="utf-8")
    tables = read_scenario_file(path)
    assert user_code_targets(tables, ["model.name=other"])
    for text in ("tools.1.function=x.py:f", "validators.1.kind=max_length", "policy.x=1"):
        assert user_code_targets(tables, [text]) == []
