"""A validator that raises, as a user meets it: the terminal timeline, the exit code, the HTML
export and ``on_validator_error`` from ``--set`` — never the model's ``failed validation``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from inspector.cli import main

SCENARIO = """
    name = "broken-check"
    [model]
    provider = "scripted"
    name = "demo"
    [prompt]
    user = "Say hi."
    [[validators]]
    kind = "python"
    function = "checks.py:broken"
    [[script]]
    text = "Hi!"
    [[script]]
    text = "Hello!"
"""
CHECKS = """
    def broken(output, ctx):
        return 1 / 0
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "checks.py").write_text(textwrap.dedent(CHECKS), encoding="utf-8")
    path = tmp_path / "broken.toml"
    path.write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    return path


def test_the_timeline_says_the_validator_broke(
    scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(scenario)]) == 1
    out = capsys.readouterr().out
    assert "validator_error" in out and "! broken: ZeroDivisionError" in out
    assert "a validator broke (raised or timed out): not the model's failure" in out
    assert "failed validation" not in out and "feedback (" not in out
    assert "error (validator error) · attempts 1/3" in out
    assert "error: ValidatorError: validator broken broke: ZeroDivisionError" in out


def test_retry_and_ignore_from_the_command_line(
    scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(scenario), "--set", "policy.on_validator_error=ignore", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["status"], record["output"], len(record["steps"])) == ("succeeded", "Hi!", 1)

    retry = ["--set", "policy.on_validator_error=retry", "--set", "policy.max_attempts=2"]
    assert main(["run", str(scenario), *retry, "--json"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert (record["status"], record["termination"]) == ("error", "validator_error")
    assert [s["status"] for s in record["steps"]] == ["validator_error", "validator_error"]
    assert [s["feedback"] for s in record["steps"]] == [[], []]


def test_a_bad_value_is_one_line(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(scenario), "--set", "policy.on_validator_error=maybe"]) == 2
    err = capsys.readouterr().err.strip()
    assert "on_validator_error" in err and len(err.splitlines()) == 1


def test_the_html_report_marks_the_broken_validator(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["run", str(scenario), "--json"])
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    target = tmp_path / "report.html"
    assert main(["export", run_id, "--format", "html", "--out", str(target)]) == 0
    page = target.read_text(encoding="utf-8")
    assert 'data-status="validator_error"' in page
    assert "not the model&#39;s failure" in page
    assert 'class="badge s-error v-error"' in page
