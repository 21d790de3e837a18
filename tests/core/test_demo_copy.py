"""'Edit a copy' of a demo, without Qt: the TOML and the files it names, never overwriting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.loop import run_turn
from inspector.core.scenario import load_scenario
from inspector.providers.factory import build_provider
from inspector.resources import demo_names, demo_path
from inspector.workflows.demo_copy import copy_demo, free_folder, named_files


@pytest.mark.parametrize("name", demo_names())
def test_every_demo_copies_and_loads_from_its_copy(name: str, tmp_path: Path) -> None:
    target = copy_demo(name, tmp_path)
    assert target == tmp_path / name / f"{name}.toml"
    assert target.read_bytes() == demo_path(name).read_bytes()
    copied = load_scenario(target)  # every file it names is there
    for file in named_files(copied):
        assert (target.parent / file).is_file()


def test_a_second_copy_goes_to_a_new_folder(tmp_path: Path) -> None:
    first = copy_demo("retry-feedback", tmp_path)
    first.write_text("edited", encoding="utf-8")
    second = copy_demo("retry-feedback", tmp_path)
    assert second.parent.name == "retry-feedback-2"
    assert first.read_text(encoding="utf-8") == "edited"  # never overwritten
    assert free_folder(tmp_path, "retry-feedback").name == "retry-feedback-3"


def test_the_default_folder_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_INSPECTOR_SCENARIOS", str(tmp_path / "mine"))
    assert copy_demo("step-cap").parent == tmp_path / "mine" / "step-cap"


def test_problems_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="demo:nope: no such demo"):
        copy_demo("nope", tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ScenarioError, match="cannot copy demo:step-cap to"):
        copy_demo("step-cap", blocker)


def test_named_files_are_the_relative_files_of_function_references(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        """
        name = "s"
        [model]
        provider = "scripted"
        [prompt]
        user = "hi"
        [[tools]]
        name = "t"
        function = "tools.py:t"
        [[validators]]
        kind = "python"
        function = "checks/validators.py:short"
        [[validators]]
        kind = "python"
        function = "tools.py:other"
        [[script]]
        text = "x"
        """.replace("\n        ", "\n"),
        encoding="utf-8",
    )
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "validators.py").write_text(
        "def short(o, c):\n    return True\n", encoding="utf-8"
    )
    (tmp_path / "tools.py").write_text(
        "def t(**k):\n    return ''\n\ndef other(o, c):\n    return True\n", encoding="utf-8"
    )
    assert named_files(load_scenario(path)) == ["checks/validators.py", "tools.py"]


def _verdicts(scenario_path: Path) -> list[list[str]]:
    scenario = load_scenario(scenario_path)
    record = asyncio.run(run_turn(scenario, build_provider(scenario)))
    return [[f"{v.validator}:{v.status}" for v in step.verdicts] for step in record.steps]


def test_the_retry_demo_judges_length_with_its_python_file(tmp_path: Path) -> None:
    """Edit a copy of retry-feedback is a ready editing loop: its markdown check is python, in
    sms_checks.py beside the copy, and an edit of that file changes the turn."""
    demo = load_scenario(demo_path("retry-feedback"))
    assert "sms_checks.py" in named_files(demo)
    copy = copy_demo("retry-feedback", tmp_path)
    checks = copy.parent / "sms_checks.py"
    assert checks.is_file()
    assert _verdicts(copy) == [
        [],
        ["no_markdown:fail", "max_length:pass"],
        ["no_markdown:pass", "max_length:fail"],
        ["no_markdown:pass", "max_length:pass"],
    ]
    allowed = checks.read_text().replace('MARKDOWN = "*_#`"', 'MARKDOWN = "#`"')
    checks.write_text(allowed, encoding="utf-8")
    # '*' is allowed now: the first draft passes and the turn ends there.
    assert _verdicts(copy) == [[], ["no_markdown:pass", "max_length:pass"]]
