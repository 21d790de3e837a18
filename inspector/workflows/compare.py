"""Loading runs to compare, as ``agent-inspector compare`` and the window's Compare tab do: the
records (a run still recording is refused with one line) and whether they are runs of one turn
(docs/compare-export.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inspector.core.records import RunRecord
from inspector.reports.compare import Comparison, compare_runs
from inspector.store import RunStillRecording, Store


def different_scenarios(records: Sequence[RunRecord], id_chars: int | None = None) -> str | None:
    """``abc is 'x', def is 'y'`` when the runs are of more than one scenario (None when they
    are all one turn's); ``id_chars`` shortens the run ids."""
    if len({r.scenario for r in records}) < 2:
        return None
    return ", ".join(f"{r.run_id[:id_chars]} is {r.scenario!r}" for r in records)


def load_comparison(path: Path, run_ids: list[str]) -> tuple[list[RunRecord], Comparison]:
    """Reads the runs and compares them (blocking: the window calls it on a worker thread)."""
    with Store.open(path) as store:
        records = []
        for run_id in run_ids:
            try:
                records.append(store.load(run_id))
            except RunStillRecording:
                raise RunStillRecording(
                    f"Run {run_id} is still recording; compare it once it has finished."
                ) from None
    return records, compare_runs(records)
