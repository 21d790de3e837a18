"""``agent-inspector gui`` end to end, in a subprocess on Qt's offscreen platform."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _gui(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "AGENT_INSPECTOR_DB": str(tmp_path / "db.sqlite3"),
    }
    return subprocess.run(
        [sys.executable, "-m", "inspector", "gui", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=50,
        cwd=tmp_path,
    )


def test_screenshot_runs_the_scenario_and_writes_the_png(tmp_path: Path) -> None:
    png = tmp_path / "x.png"
    done = _gui(
        "demo:step-cap",
        "--db",
        str(tmp_path / "runs.sqlite3"),
        "--screenshot",
        str(png),
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "runs.sqlite3").is_file()  # the run was recorded where --db said
    assert "Traceback" not in done.stderr


def test_self_test_passes(tmp_path: Path) -> None:
    done = _gui("--self-test", tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "self-test: ok   the run succeeded" in done.stdout
    assert "FAIL" not in done.stdout


def test_a_broken_scenario_still_renders_and_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "b"\n[prompt\n', encoding="utf-8")
    png = tmp_path / "broken.png"
    done = _gui(str(broken), "--screenshot", str(png), tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("agent-inspector: error: ") and "broken.toml" in done.stderr
    assert "Traceback" not in done.stderr
    assert png.is_file()


def test_bare_command_means_gui(tmp_path: Path) -> None:
    png = tmp_path / "bare.png"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "AGENT_INSPECTOR_DB": str(tmp_path / "db.sqlite3"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "--screenshot", str(png)],
        capture_output=True, text=True, env=env, timeout=50, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert png.is_file()


def test_no_display_means_offscreen_for_headless_output_and_an_error_for_a_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inspector.commands.gui import choose_platform
    from inspector.core.errors import InspectorError

    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    with pytest.raises(InspectorError, match="no display"):
        choose_platform(headless_output=False)
    choose_platform(headless_output=True)
    assert os.environ["QT_QPA_PLATFORM"] == "offscreen"


@pytest.mark.parametrize("size", ["10x10", "wide", "1024", "1024xabc"])
def test_a_bad_size_is_a_one_line_error(size: str, tmp_path: Path) -> None:
    done = _gui("--size", size, "--screenshot", str(tmp_path / "x.png"), tmp_path=tmp_path)
    assert done.returncode == 2
    assert "--size" in done.stderr and "WIDTHxHEIGHT" in done.stderr
    assert "Traceback" not in done.stderr
