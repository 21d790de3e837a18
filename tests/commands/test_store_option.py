"""``--db`` / AGENT_INSPECTOR_DB on the commands that only read a store: a path with nothing
there, or something that is no store, is bad input (exit 2, one line naming the path) and
nothing is created; the default store not there yet is a fresh machine, not an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inspector.locations
from inspector.cli import main
from inspector.locations import ENV_VAR

Capture = pytest.CaptureFixture[str]

# Every command that reads runs or sweeps from a store (the ids need not exist: the store is
# what is missing). ``replay`` reads a run then records a new one beside it.
READING = {
    "runs": ["runs"],
    "runs --json": ["runs", "--json"],
    "sweeps": ["sweeps"],
    "export": ["export", "abc", "--format", "jsonl"],
    "export html": ["export", "abc", "--format", "html"],
    "export otel": ["export", "abc", "--format", "otel"],
    "export a sweep": ["export", "sw123"],
    "compare": ["compare", "abc", "def"],
    "replay": ["replay", "abc", "--offline"],
    "revalidate": ["revalidate", "abc"],
    "revalidate --scenario": ["revalidate", "--scenario", "sms"],
    "revalidate --sweep": ["revalidate", "--sweep", "sw123"],
    "scenario-from": ["scenario-from", "abc", "--out", "{out}"],
    "sweep --resume": ["sweep", "--resume", "sw123"],
}


def command(name: str, tmp_path: Path) -> list[str]:
    out = tmp_path / "written" / "scenario.toml"  # scenario-from's --out: never reached
    return [word.replace("{out}", str(out)) for word in READING[name]]


def one_error(capsys: Capture) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize("name", sorted(READING))
def test_a_db_with_no_store_there_is_bad_input_and_nothing_is_created(
    name: str, tmp_path: Path, capsys: Capture
) -> None:
    folder = tmp_path / "stores"
    folder.mkdir()
    typo = folder / "typo.sqlite3"
    assert main([*command(name, tmp_path), "--db", str(typo)]) == 2
    assert one_error(capsys) == f"agent-inspector: error: no store at {typo} (--db)\n"
    assert list(folder.iterdir()) == []  # no file, no -wal, no -shm
    assert not (tmp_path / "written").exists()


@pytest.mark.parametrize("name", sorted(READING))
def test_the_environment_naming_no_store_is_bad_input_too(
    name: str, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "no" / "such" / "folder" / "runs.sqlite3"
    monkeypatch.setenv(ENV_VAR, str(typo))
    assert main(command(name, tmp_path)) == 2
    assert one_error(capsys) == f"agent-inspector: error: no store at {typo} ({ENV_VAR})\n"
    assert not (tmp_path / "no").exists()  # not even the folder


@pytest.mark.parametrize("name", ["runs", "export", "replay", "sweep --resume"])
@pytest.mark.parametrize(
    ("thing", "problem"),
    [
        ("folder", "is a folder, not a store file"),
        ("text", "not an agent-inspector store (file is not a database)"),
        ("empty", "not an agent-inspector store (an empty file); left unchanged"),
    ],
)
def test_a_db_that_is_no_store_is_one_line_and_left_as_it_was(
    name: str, thing: str, problem: str, tmp_path: Path, capsys: Capture
) -> None:
    folder = tmp_path / "stores"
    folder.mkdir()
    path = folder / "runs.sqlite3"
    if thing == "folder":
        path.mkdir()
    else:
        path.write_text("" if thing == "empty" else "notes, not runs\n", encoding="utf-8")
    before = None if thing == "folder" else path.read_bytes()
    assert main([*command(name, tmp_path), "--db", str(path)]) == 2
    assert one_error(capsys) == f"agent-inspector: error: {path}: {problem}\n"
    assert [p.name for p in folder.iterdir()] == ["runs.sqlite3"]  # no side file
    assert before is None or path.read_bytes() == before


@pytest.fixture
def default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No --db, no AGENT_INSPECTOR_DB: the user data dir's store, here not made yet."""
    path = tmp_path / "user-data" / "agent-inspector" / "runs.sqlite3"
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setattr(inspector.locations, "default_db_path", lambda: path)
    return path


def test_a_fresh_machine_lists_no_runs_and_creates_no_store(
    default_store: Path, capsys: Capture
) -> None:
    assert main(["runs"]) == 0
    assert capsys.readouterr().out == "no runs recorded yet\n"
    assert main(["runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["runs", "--scenario", "sms"]) == 0
    assert capsys.readouterr().out == f"no run of scenario 'sms' in {default_store}\n"
    assert main(["sweeps"]) == 0
    assert capsys.readouterr().out == f"no sweep recorded yet in {default_store}\n"
    assert main(["sweeps", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert not default_store.parent.parent.exists()

    assert main(["run", "demo:empty-final"]) == 0  # recording creates it
    capsys.readouterr()
    assert main(["runs", "--json"]) == 0
    assert [r["scenario"] for r in json.loads(capsys.readouterr().out)] == ["empty-final"]


@pytest.mark.parametrize("name", sorted(set(READING) - {"runs", "runs --json", "sweeps"}))
def test_reading_a_run_from_a_fresh_machine_is_bad_input(
    name: str, default_store: Path, tmp_path: Path, capsys: Capture
) -> None:
    assert main(command(name, tmp_path)) == 2
    assert one_error(capsys) == (
        f"agent-inspector: error: no store at {default_store} yet (the default store: "
        "nothing recorded there)\n"
    )
    assert not default_store.parent.parent.exists()


def test_recording_commands_still_create_the_store(tmp_path: Path, capsys: Capture) -> None:
    made = tmp_path / "new" / "folder" / "runs.sqlite3"
    assert main(["run", "demo:empty-final", "--db", str(made), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert made.is_file()
    swept = tmp_path / "sweeps" / "runs.sqlite3"
    assert main(["sweep", "demo:sweep", "--repeat", "1", "--seed", "1", "--db", str(swept)]) == 0
    assert swept.is_file()
    exported = tmp_path / "run.otel.json"
    assert (
        main(["export", run_id, "--format", "otel", "--db", str(made), "--out", str(exported)]) == 0
    )
    imported = tmp_path / "imports" / "runs.sqlite3"
    assert main(["import", str(exported), "--db", str(imported)]) == 0
    assert imported.is_file()
