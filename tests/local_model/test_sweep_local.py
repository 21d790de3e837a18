"""A sweep against the real local model (make test-local): every run recorded and counted, at
most the concurrency asked for, costs unknown for a model the price table does not know."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main

pytestmark = pytest.mark.local_model


def test_a_small_sweep_against_the_local_model(
    base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "sweep", "demo:local-model", "--set", f"model.base_url={base_url}",
        "--vary", "policy.feedback_history=accumulate,none", "--repeat", "2",
        "--concurrency", "2", "--db", str(tmp_path / "s.db"), "--json",
    ]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["runs"] == report["expected"] == 4
    for arm in report["arms"]:
        assert arm["runs"] == 2 and arm["missing"] == 0
        assert sum(arm["terminations"].values()) == 2
        if arm["cost"]["per_run"] is None:  # the table may learn the model one day
            assert "gemma-3-270m" in arm["cost"]["note"]
