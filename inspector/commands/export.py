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
    from inspector.core.records import RunRecord
    from inspector.reports.jsonl import Timed

NAME = "export"
HELP = "export a run as JSONL events, an HTML report or OpenTelemetry GenAI spans"
FORMATS = ("jsonl", "html", "otel")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN_ID", help="a recorded run (a unique prefix works)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl (events), html (report) or otel (OTLP/JSON GenAI spans)",
    )
    parser.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    add_db_argument(parser)
    _add_otel_arguments(parser)


def _add_otel_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-content",
        action="store_true",
        help="otel: leave out message content, tool arguments and results, outputs",
    )
    parser.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="push the otel spans to this OTLP/HTTP collector instead of writing them",
    )
    parser.add_argument(
        "--header",
        dest="headers",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a header for --otlp-endpoint (repeatable; never printed or stored)",
    )


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.reports.synthetic_events import events_from_record
    from inspector.store import Store

    otel = args.format == "otel" or args.otlp_endpoint is not None
    with Store.open(args.db) as store:
        record = store.load(args.run_id)
        events: Sequence[Timed] = [] if otel else store.events(record.run_id)
    if otel:  # the store is closed first: a push may wait on the network
        return _export_otel(record, args, out)
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


def _export_otel(record: RunRecord, args: argparse.Namespace, out: TextIO) -> int:
    import json

    from inspector.formats.otel_export import run_to_otlp

    document = run_to_otlp(record, content=not args.no_content)
    if args.otlp_endpoint:
        from inspector.formats.otlp_push import parse_headers, push, traces_url

        count = push(document, args.otlp_endpoint, parse_headers(args.headers))
        url = traces_url(args.otlp_endpoint)
        print(f"sent run {record.run_id} ({count} spans) to {url}", file=sys.stderr)
        return 0
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    if args.out is None:
        out.write(text)
        return 0
    _write_atomically(Path(args.out), [text])
    print(f"exported run {record.run_id} as otel to {args.out}", file=sys.stderr)
    return 0


def _write_atomically(path: Path, chunks: Iterable[str]) -> None:
    """All or nothing: a failed export never leaves half a file where the user expects one."""
    from inspector.core.errors import InspectorError
    from inspector.core.files import write_atomically

    try:
        write_atomically(path, (chunk.encode("utf-8") for chunk in chunks))
    except OSError as exc:
        raise InspectorError(f"export: cannot write {path}: {exc.strerror}") from None
