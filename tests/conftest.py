"""Suite-wide isolation: no test writes to the real user data dir's store."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    path = tmp_path_factory.mktemp("store") / "runs.sqlite3"
    monkeypatch.setenv("AGENT_INSPECTOR_DB", str(path))
    return path
