"""Runs recorded through the CLI into a temporary store, as a user makes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.resources import resolve_scenario

FIXTURES = Path(__file__).parent / "fixtures"
DEMOS = (
    "retry-feedback",
    "step-cap",
    "final-answer-tool",
    "empty-final",
    "invalid-output-fallback",
)
Capsys = pytest.CaptureFixture[str]


def record_demo(capsys: Capsys, db: Path, demo: str, *overrides: str) -> dict[str, object]:
    """Runs ``demo:NAME`` (pacing delays off) into ``db``; its stored record as JSON."""
    entries = len(resolve_scenario(f"demo:{demo}").script)
    undelayed = [f"script.{i}.delay_ms=0" for i in range(entries)]
    sets = [arg for o in (*overrides, *undelayed) for arg in ("--set", o)]
    main(["run", f"demo:{demo}", *sets, "--db", str(db), "--json"])
    record: dict[str, object] = json.loads(capsys.readouterr().out)
    return record


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite3"
