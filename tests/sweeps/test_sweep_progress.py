"""The live progress line: runs done / total, failures, ETA."""

from __future__ import annotations

import io

from inspector.commands.sweep_run import ProgressLine
from inspector.core.policy import Policy
from inspector.core.records import Budgets, RunRecord
from inspector.sweeps.runner import Progress


def record(status: str) -> RunRecord:
    return RunRecord(
        run_id="r", scenario="s", started_at="t", policy=Policy(), status=status,  # type: ignore[arg-type]
        budgets=Budgets(max_attempts=1, max_steps=1),
    )  # fmt: skip


def test_progress_counts_failures_and_estimates_the_rest() -> None:
    progress = Progress(total=10, started=100.0)
    assert progress.line(100.0) == "0/10 runs · 0 failed · 0s elapsed · ETA -"
    for status in ("succeeded", "failed", "fallback", "error", "cancelled"):
        progress.add(record(status))
    # 4 done (a cancelled run is not done) in 8 s: 2 s each, 6 to go.
    assert progress.line(108.0) == "4/10 runs · 2 failed · 8s elapsed · ETA 12s"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_is_redrawn_on_a_terminal_only() -> None:
    clock = iter([0.0, 1.0, 2.0, 3.0]).__next__
    tty = Tty()
    line = ProgressLine(2, tty, clock=clock)
    line(None, record("succeeded"))  # type: ignore[arg-type]
    line(None, record("failed"))  # type: ignore[arg-type]
    line.end()
    assert tty.getvalue().count("\r") == 3
    assert tty.getvalue().endswith("2/2 runs · 1 failed · 3s elapsed · ETA 0s\x1b[K\n")
    piped = io.StringIO()
    quiet = ProgressLine(1, piped)
    quiet(None, record("succeeded"))  # type: ignore[arg-type]
    quiet.end()
    assert piped.getvalue() == ""
