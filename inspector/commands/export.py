"""``agent-inspector export RUN_ID --format jsonl|html``: a run's events as JSON Lines, or a
self-contained HTML report to attach to a bug report. Both carry a version and no keys."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument

if TYPE_CHECKING:
    from inspector.reports.jsonl import Timed

NAME = "export"
HELP = "export a run as JSONL events or an HTML report; a sweep as CSV, JSON or HTML"
FORMATS = ("jsonl", "html", "csv", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_id",
        metavar="RUN_ID|SWEEP_ID",
        help="a recorded run or sweep (sw...; a unique prefix works)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="a run: jsonl (events, the default) or html; a sweep: csv (the default), json, html",
    )
    parser.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    add_db_argument(parser)


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.commands.sweep_run import export_sweep, is_sweep_id
    from inspector.core.errors import ScenarioError
    from inspector.reports.synthetic_events import events_from_record
    from inspector.store import Store

    if is_sweep_id(args.run_id):
        return export_sweep(args, out, _write_atomically)
    args.format = args.format or "jsonl"
    if args.format not in ("jsonl", "html"):
        raise ScenarioError(f"export --format {args.format}: a run exports as jsonl or html")
    with Store.open(args.db) as store:
        record = store.load(args.run_id)
        events: Sequence[Timed] = store.events(record.run_id)
    synthesized = not events
    if synthesized:  # stored without its event log (an import): rebuilt, and the export says so
        events = events_from_record(record)
    if args.format == "html":
        from inspector.reports.html_report import render_html

        chunks: Iterable[str] = [render_html(record, synthesized=synthesized)]
    else:
        from inspector.reports.jsonl import jsonl_lines

        chunks = (line + "\n" for line in jsonl_lines(record, events, synthesized=synthesized))
    if args.out is None:
        out.writelines(chunks)
        return 0
    _write_atomically(Path(args.out), chunks)
    note = " (events rebuilt from the record)" if synthesized else ""
    print(f"exported run {record.run_id} as {args.format} to {args.out}{note}", file=sys.stderr)
    return 0


def _write_atomically(path: Path, chunks: Iterable[str]) -> None:
    """All or nothing: a failed export never leaves half a file where the user expects one."""
    from inspector.core.errors import InspectorError
    from inspector.core.files import write_atomically

    try:
        write_atomically(path, (chunk.encode("utf-8") for chunk in chunks))
    except OSError as exc:
        raise InspectorError(f"export: cannot write {path}: {exc.strerror}") from None
