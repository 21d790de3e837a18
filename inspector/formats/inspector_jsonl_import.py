"""This project's own JSONL export (``export --format jsonl``) → the run it was exported from
(``import --format inspector-jsonl``): a run sent from another machine, as it was recorded.

The export's events are applied in order, as the window applies a live run's, and the run's
last event (``run_finished``) carries the whole record. The export is redacted, so the run is
too. A problem raises ``ValueError`` naming the line (``read_jsonl``), or the export's end."""

from __future__ import annotations

import json

from inspector.core.records import RunRecord


def is_export(text: str) -> bool:
    """Whether ``text`` starts with the header line of an ``export --format jsonl``."""
    first = text.lstrip().split("\n", 1)[0]
    if '"header"' not in first:
        return False
    try:
        header = json.loads(first)
    except ValueError:
        return False
    return isinstance(header, dict) and header.get("kind") == "header" and "run_id" in header


def run_from_export(text: str) -> RunRecord:
    from inspector.core.live import LiveRun
    from inspector.reports.jsonl import read_jsonl

    _header, events = read_jsonl(text.splitlines())
    run = LiveRun()
    for read in events:
        run.apply(read.event)
    if run.record is None:
        raise ValueError("the export ends before its run does (no run_finished line)")
    return run.record
