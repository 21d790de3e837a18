"""Suite-wide isolation: no test touches the real user data dir's store, the user's policy
presets or the window's saved layout and recent files, and Qt never looks for a display (the
suite runs headless, also when pytest is called without make)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _isolated_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    path = tmp_path_factory.mktemp("store") / "runs.sqlite3"
    monkeypatch.setenv("AGENT_INSPECTOR_DB", str(path))
    return path


@pytest.fixture(autouse=True)
def _isolated_presets(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    # The policy panel lists the user's policy presets: never the real config dir's.
    path = tmp_path_factory.mktemp("presets")
    monkeypatch.setenv("AGENT_INSPECTOR_PRESETS", str(path))
    return path


@pytest.fixture(autouse=True)
def _isolated_window_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    # The window's saved layout and recent scenarios: never the user's own window.ini.
    path = tmp_path_factory.mktemp("window") / "window.ini"
    monkeypatch.setenv("AGENT_INSPECTOR_WINDOW_STATE", str(path))
    return path
