"""``--set`` on the command line: a broken inline TOML table or array is bad input (exit 2, one
line naming the ``--set`` and TOML's reason), never run as the text it happens to be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.cli import main

Capture = pytest.CaptureFixture[str]


def test_a_broken_inline_table_exits_2_and_records_nothing(capsys: Capture) -> None:
    assert main(["run", "demo:sweep", "--set", "policy.fallback={ body = "]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "agent-inspector: error: --set 'policy.fallback={ body = ': not a TOML table: "
        "Invalid value (quote it to set text)\n"
    )
    assert not Path(os.environ["AGENT_INSPECTOR_DB"]).exists()  # no run was started
