"""A file the user names (``export --out``, ``scenario-from --out``, ``--screenshot``) that
cannot be written is bad input (DESIGN §5: exit 2, one line naming the option, the path and
why, no traceback), and nothing half-written is left; a write that fails for another reason (a
full disk) stays an error (exit 1)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.errors import BadInputError, InspectorError
from inspector.core.files import output_path_problem, write_output

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def run_id(capsys: Capture) -> str:
    assert main(["run", "demo:sweep", "--json"]) == 0
    found: str = json.loads(capsys.readouterr().out)["run_id"]
    return found


@pytest.fixture
def sweep_id(capsys: Capture) -> str:
    main(["sweep", "demo:sweep", "--repeat", "1", "--seed", "1", "--json"])
    found: str = json.loads(capsys.readouterr().out)["sweep_id"]
    return found


def unwritable(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Paths no file can be written at, and the reason the error line gives."""
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    return {
        "missing folder": (tmp_path / "missing" / "x", f"no folder {tmp_path / 'missing'}"),
        "a folder": (tmp_path, "is a folder"),
        "under a file": (tmp_path / "a-file" / "x", f"{tmp_path / 'a-file'} is not a folder"),
    }


def one_error_line(capsys: Capture) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


@pytest.mark.parametrize("fmt", ["jsonl", "html", "otel"])
def test_export_of_a_run_to_an_unwritable_path_is_bad_input(
    capsys: Capture, tmp_path: Path, run_id: str, fmt: str
) -> None:
    for path, why in unwritable(tmp_path).values():
        before = sorted(p.name for p in tmp_path.rglob("*"))
        assert main(["export", run_id, "--format", fmt, "--out", str(path)]) == 2
        line = one_error_line(capsys)
        assert line == f"agent-inspector: error: export --out {path}: cannot write: {why}"
        assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_export_of_a_sweep_to_an_unwritable_path_is_bad_input(
    capsys: Capture, tmp_path: Path, sweep_id: str
) -> None:
    for path, why in unwritable(tmp_path).values():
        assert main(["export", sweep_id, "--format", "csv", "--out", str(path)]) == 2
        assert one_error_line(capsys).endswith(f"export --out {path}: cannot write: {why}")


def test_scenario_from_to_an_unwritable_path_is_bad_input(
    capsys: Capture, tmp_path: Path, run_id: str
) -> None:
    for path, why in unwritable(tmp_path).values():
        assert main(["scenario-from", run_id, "--out", str(path)]) == 2
        assert one_error_line(capsys).endswith(f"scenario-from --out {path}: cannot write: {why}")


def test_the_screenshot_path_is_checked_before_the_window_opens(
    capsys: Capture, tmp_path: Path
) -> None:
    path = tmp_path / "missing" / "x.png"
    assert main(["gui", "demo:sweep", "--screenshot", str(path)]) == 2
    line = one_error_line(capsys)
    assert line.endswith(f"--screenshot {path}: cannot write: no folder {path.parent}")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_folder_without_write_permission_is_named(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert output_path_problem(locked / "x") == (
            f"permission denied (cannot create a file in {locked})"
        )
    finally:
        locked.chmod(0o700)


def test_a_write_that_fails_for_the_machine_is_an_error_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    target = tmp_path / "out.jsonl"

    def chunks() -> Iterator[bytes]:
        yield b"half"
        raise OSError(28, "No space left on device")

    with pytest.raises(InspectorError) as raised:
        write_output(target, chunks(), "export --out")
    assert not isinstance(raised.value, BadInputError)
    assert str(raised.value) == f"export --out {target}: cannot write: No space left on device"
    assert list(tmp_path.iterdir()) == []


def test_a_write_refused_for_the_path_is_bad_input(tmp_path: Path) -> None:
    def chunks() -> Iterator[bytes]:
        raise PermissionError(13, "Permission denied")
        yield b""

    with pytest.raises(BadInputError, match="cannot write: Permission denied"):
        write_output(tmp_path / "x", chunks(), "export --out")
    assert list(tmp_path.iterdir()) == []
