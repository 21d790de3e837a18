"""Opening files that are not (or no longer) healthy stores: another application's database, a
newer schema, damaged pages, paths that are no file, and a full disk. Each is one line and leaves
the file exactly as it was; a full disk still lets the reading commands read."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import Store, StoreError, StoreUnusable
from inspector.store.schema import SCHEMA_VERSION
from tests.store.conftest import record_demo


def _digest(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` (side files included) by content: nothing may change."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("agent-inspector: error: "), err
    assert needle in err and "Traceback" not in err


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    path = tmp_path / "other-app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ann')")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("argv", [["runs"], ["run", "demo:empty-final"], ["export", "abc"]])
def test_another_applications_database_is_refused_untouched(
    foreign: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    before = _digest(foreign.parent)
    _one_line_exit_2(capsys, [*argv, "--db", str(foreign)], "not an agent-inspector store")
    assert _digest(foreign.parent) == before  # no tables added, no WAL side files
    conn = sqlite3.connect(foreign)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_an_empty_database_another_application_marked_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    before = _digest(tmp_path)
    _one_line_exit_2(capsys, ["runs", "--db", str(path)], "marked as its own")
    assert _digest(tmp_path) == before


def test_a_newer_store_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.sqlite3"
    with Store.open(path) as store:
        record_demo(store, "empty-final")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    before = _digest(tmp_path)
    _one_line_exit_2(capsys, ["runs", "--db", str(path)], "is newer than this agent-inspector")
    with pytest.raises(StoreUnusable, match="upgrade agent-inspector"):
        Store.open(path, read_only_fallback=True)
    assert _digest(tmp_path) == before


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_text("name = 'not sqlite'\n" * 40), "not an agent-inspector store"),
        (lambda p: os.mkfifo(p), "not a regular file"),
    ],
    ids=["folder", "text-file", "fifo"],
)
def test_paths_that_hold_no_store_are_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, needle: str
) -> None:
    path = tmp_path / "db"
    make(path)  # type: ignore[operator]
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv in (["runs"], ["run", "demo:empty-final"]):
        _one_line_exit_2(capsys, [*argv, "--db", str(path)], needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_devices_and_nul_bytes_are_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    _one_line_exit_2(capsys, ["runs", "--db", os.devnull], "not a regular file")
    _one_line_exit_2(capsys, ["runs", "--db", "a\0b.db"], "cannot open the store")


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "runs.sqlite3"
    with Store.open(path) as store:
        ids = [record_demo(store, name)[0].run_id for name in ("retry-feedback", "step-cap")]
    return path, ids


def _damage(path: Path, page: int) -> None:
    with path.open("r+b") as f:
        f.seek(page * 4096 + 8)
        f.write(bytes(range(256)) * 15)


def test_damaged_pages_are_one_line_from_every_reading_command(
    recorded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = recorded
    pristine = path.read_bytes()
    pages = len(pristine) // 4096
    commands = [
        ["runs"],
        ["export", ids[0]],
        ["export", ids[1], "--format", "html"],
        ["revalidate", ids[0]],
        ["compare", ids[0], ids[1], "--any-scenario"],
        ["replay", ids[0], "--offline"],
    ]
    damaged_seen = 0
    for page in range(1, pages):
        path.write_bytes(pristine)
        _damage(path, page)
        for argv in commands:
            code = main([*argv, "--db", str(path)])
            captured = capsys.readouterr()
            assert "Traceback" not in captured.err
            lines = [line for line in captured.err.splitlines() if "error:" in line]
            assert code in (0, 1, 2)
            if code == 2:
                assert len(lines) == 1 and ("damaged" in lines[0] or "not an" in lines[0])
                damaged_seen += 1
    assert damaged_seen > 0  # the damage did reach the rows these commands read


def test_reading_a_damaged_run_raises_the_projects_error(recorded: tuple[Path, list[str]]) -> None:
    path, ids = recorded
    conn = sqlite3.connect(path)
    conn.execute("UPDATE runs SET record = '{not json' WHERE run_id = ?", (ids[0],))
    conn.commit()
    conn.close()
    with Store.open(path) as store, pytest.raises(StoreUnusable, match="damaged store") as caught:
        store.load(ids[0])
    assert "\n" not in str(caught.value)


# ---- a full disk ---------------------------------------------------------------------------


@contextlib.contextmanager
def _tiny_tmpfs(where: Path, size: str = "1m") -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)


def test_a_full_disk_still_opens_read_only_for_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _tiny_tmpfs(tmp_path / "mnt") as mnt:
        path = mnt / "runs.sqlite3"
        with Store.open(path) as store:
            dead, finished = (record_demo(store, "empty-final")[0].run_id for _ in range(2))
        # A dead writer's run, which opening would settle: the write the full disk refuses.
        conn = sqlite3.connect(path)
        conn.execute(
            "UPDATE runs SET status = 'running', writer_host = ?, writer_pid = ? WHERE run_id = ?",
            (socket.gethostname(), 2**22 + 7, dead),
        )
        conn.commit()
        conn.close()
        _fill(mnt)
        with pytest.raises(StoreError):
            Store.open(path)  # a writing command still fails, in one line
        assert main(["runs", "--db", str(path), "--json"]) == 0
        captured = capsys.readouterr()
        notes = captured.err.splitlines()
        assert len(notes) == 1 and "opened read-only" in notes[0], captured.err
        assert dead in captured.out and finished in captured.out
        assert main(["export", finished, "--db", str(path)]) == 0
        captured = capsys.readouterr()
        assert finished in captured.out and "opened read-only" in captured.err
        # The dead writer's run reads as recovery would record it, and stays unwritten.
        with Store.open(path, read_only_fallback=True) as store:
            assert store.load(dead).status == "interrupted"
            assert {r.run_id: r.status for r in store.runs()}[dead] == "running"
        assert main(["run", "demo:empty-final", "--db", str(path)]) == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("agent-inspector: error:") == 1
