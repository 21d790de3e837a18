"""``scenario-from RUN_ID --out FILE``: the saved scenario replays the run offline — run again, it
takes the same steps to the same end (native runs keep their validators and policy)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.workflows.imports import scenario_text
from tests.formats.conftest import DEMOS, FIXTURES, Capsys, record_demo


def _save(capsys: Capsys, db: Path, run_id: str, out: Path, *flags: str) -> dict[str, Any]:
    assert main(["scenario-from", run_id, "--out", str(out), "--db", str(db), *flags]) == 0
    assert f"saved run {run_id}" in capsys.readouterr().err
    return tomllib.loads(out.read_text())


def _run(capsys: Capsys, db: Path, path: Path) -> dict[str, Any]:
    main(["run", str(path), "--db", str(db), "--json"])
    record: dict[str, Any] = json.loads(capsys.readouterr().out)
    return record


def _shape(record: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (s["attempt"], s["status"], [v["status"] for v in s["verdicts"]], s["response"])
        for s in record["steps"]
    ]


@pytest.mark.parametrize("demo", DEMOS)
def test_a_saved_demo_run_runs_again_the_same_way(
    capsys: Capsys, db: Path, tmp_path: Path, demo: str
) -> None:
    original = record_demo(capsys, db, demo)
    path = tmp_path / "saved.toml"
    data = _save(capsys, db, original["run_id"], path)  # type: ignore[arg-type]
    assert data["model"]["provider"] == "scripted"
    assert original["run_id"] in data["description"]  # type: ignore[operator]
    again = _run(capsys, db, path)
    assert again["status"] == original["status"]
    assert again["termination"] == original["termination"]
    assert again["output"] == original["output"]
    assert _shape(again) == _shape(original)
    assert [s["request"] for s in again["steps"]] == [s["request"] for s in original["steps"]]  # type: ignore[index, union-attr]


def test_tools_results_and_side_effects(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    original = record_demo(capsys, db, "retry-feedback")
    path = tmp_path / "saved.toml"
    tool = original["steps"][0]["response"]["tool_calls"][0]["name"]  # type: ignore[index]
    data = _save(capsys, db, str(original["run_id"]), path, "--side-effects", tool)
    (saved,) = [t for t in data["tools"] if t["name"] == tool]
    assert saved["side_effects"] is True
    assert saved["result"] == original["steps"][0]["tool_results"][0]["content"]  # type: ignore[index]
    code = main(["scenario-from", str(original["run_id"]), "--out", str(path),
                 "--side-effects", "nope", "--db", str(db)])  # fmt: skip
    assert code == 2
    assert "no tool named 'nope'" in capsys.readouterr().err


def test_an_imported_history_saves_as_a_scenario_that_runs(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    main(["import", str(FIXTURES / "pydantic_ai_history.json"), "--db", str(db), "--json"])
    imported = json.loads(capsys.readouterr().out)
    path = tmp_path / "saved.toml"
    data = _save(capsys, db, imported["run_id"], path)
    assert data["prompt"]["system"] == "You write SMS messages."
    assert [t["name"] for t in data["tools"]] == ["lookup_contact"]
    assert len(data["script"]) == 3
    again = _run(capsys, db, path)
    # Its validator is not known, so the answer it rejected is accepted now.
    assert again["status"] == "succeeded" and len(again["steps"]) == 2


def test_a_saved_scenario_carries_no_key_the_run_held(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    """A saved scenario is shared like an export: a key in a reply or a prompt (a model or a
    server echoing it) is redacted as the exports redact it (the store keeps the text)."""
    key = "sk-proj-QA8secret1234567890abcdef"
    original = record_demo(
        capsys, db, "retry-feedback",
        f"script.3.text=Hi Sam, your key is {key}", f"prompt.user=Use {key} to text Sam.",
    )  # fmt: skip
    path = tmp_path / "saved.toml"
    data = _save(capsys, db, str(original["run_id"]), path)
    assert key not in path.read_text()
    assert data["script"][3]["text"] == "Hi Sam, your key is [redacted]"
    assert data["prompt"]["messages"][0]["content"] == "Use [redacted] to text Sam."
    assert _run(capsys, db, path)["status"] == "succeeded"  # still a scenario that runs
    assert key not in scenario_text(db, str(original["run_id"]))  # the window's Save as


LOGIN = """\
name = "login"
[prompt]
user = "log in"
[[tools]]
name = "login"
description = "Log in"
result = "ok"
[tools.parameters]
type = "object"
required = ["user", "password"]
[tools.parameters.properties.user]
type = "string"
[tools.parameters.properties.password]
type = "string"
[output.schema]
type = "object"
properties = { api_key = { type = "string" } }
[[script]]
tool_calls = [{ name = "login", arguments = { user = "bob", password = "hunter2hunter2" } }]
[[script]]
final = { api_key = "none" }
"""


def test_a_saved_scenario_keeps_its_schemas_credential_named_fields(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    """Redacted as an export redacts a run's scenario: a tool's parameter or an output field
    named ``password``/``api_key`` is a schema, not a credential — it stays, and the saved
    file loads and runs; the recorded argument's value is still not written."""
    scenario = tmp_path / "login.toml"
    scenario.write_text(LOGIN, encoding="utf-8")
    original = _run(capsys, db, scenario)
    assert original["status"] == "succeeded"
    path = tmp_path / "saved.toml"
    data = _save(capsys, db, str(original["run_id"]), path)
    assert data["tools"][0]["parameters"]["properties"]["password"] == {"type": "string"}
    assert data["output"]["schema"]["properties"]["api_key"] == {"type": "string"}
    assert "hunter2hunter2" not in path.read_text()
    assert _run(capsys, db, path)["status"] == "succeeded"
    assert "hunter2hunter2" not in scenario_text(db, str(original["run_id"]))
