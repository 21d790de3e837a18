"""``agent-inspector export RUN_ID --format jsonl|html``: a run's events as JSON Lines, or a
self-contained HTML report to attach to a bug report. Both carry a version and no keys."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument, open_store_for_reading

if TYPE_CHECKING:
    from inspector.core.records import RunRecord
    from inspector.reports.jsonl import TimedEvents

NAME = "export"
HELP = (
    "export a run as JSONL events, an HTML report or OpenTelemetry GenAI spans; a sweep as CSV, "
    "JSON or HTML"
)
FORMATS = ("jsonl", "html", "otel", "csv", "json")
RUN_FORMATS = ("jsonl", "html", "otel")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_id",
        metavar="RUN_ID|SWEEP_ID",
        help="a recorded run or sweep (sw...; a unique prefix works)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="a run: jsonl (events, the default), html (report) or otel (OTLP/JSON GenAI "
        "spans); a sweep: csv (the default), json, html",
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
        "--input-messages",
        metavar="N|all",
        default="100",
        help="otel: at most the last N input messages per chat span (default 100; the rest "
        "are the previous span's, and import puts them back); all: every one",
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
    from inspector.core.errors import ScenarioError
    from inspector.core.files import check_output_path
    from inspector.workflows.sweep_ids import is_sweep_id

    if args.out is not None:  # before the run is read: a bad path is said at once
        check_output_path(Path(args.out), "export --out")
    if is_sweep_id(args.run_id):  # the sweep machinery is imported for sweeps only
        from inspector.commands.sweep_run import export_sweep

        return export_sweep(args, out, _write_atomically)
    args.format = args.format or "jsonl"
    if args.format not in RUN_FORMATS:
        raise ScenarioError(
            f"export --format {args.format}: a run exports as {', '.join(RUN_FORMATS)}"
        )
    if args.format == "otel" or args.otlp_endpoint is not None:
        with open_store_for_reading(args.db) as store:
            record = store.load(args.run_id)
        return _export_otel(record, args, out)  # the store closed first: a push may wait
    # A report reads the run and writes it: what is read and made holds no cycles, and the
    # collector would only walk it again and again as the export allocates (half of a
    # 10,000-step export's time). Off until the report is written, then what was read is
    # frozen: neither a later collection nor the one at the process's exit walks it.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _export_report(args, out)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _export_report(args: argparse.Namespace, out: TextIO) -> int:
    """A run as JSONL events or an HTML report."""
    with open_store_for_reading(args.db) as store:
        chunks: Iterable[str]
        if args.format == "html":  # the report is the record's: no events to read
            from inspector.reports.html_report import render_html

            record = store.load(args.run_id)
            synthesized = not store.has_events(record.run_id)
            chunks = [render_html(record, synthesized=synthesized)]
        else:
            from inspector.reports.jsonl import VERBATIM_KINDS, jsonl_chunks
            from inspector.reports.synthetic_events import events_from_record

            # Read as the lines are written (the store stays open until then): deltas and
            # tool results come as their stored JSON, most lines, no model built.
            stream = store.event_stream(args.run_id, VERBATIM_KINDS)
            # The last event carries the record (read once, sharing the steps' messages).
            record = stream.record if stream.record is not None else store.load(args.run_id)
            synthesized = len(stream) == 0
            events: TimedEvents = stream
            if synthesized:  # stored without its event log (an import): rebuilt, and it says so
                events = events_from_record(record)
            chunks = jsonl_chunks(record, events, synthesized=synthesized)
        if args.out is None:
            out.writelines(chunks)
            return 0
        _write_atomically(Path(args.out), chunks)
    note = " (events rebuilt from the record)" if synthesized else ""
    print(f"exported run {record.run_id} as {args.format} to {args.out}{note}", file=sys.stderr)
    return 0


# A chunk is encoded this many characters at a time (a run's record is a line of megabytes:
# its bytes whole would be one more copy of it held at once).
ENCODE_CHARS = 1 << 20


def _encoded(chunks: Iterable[str]) -> Iterator[bytes]:
    for chunk in chunks:
        if len(chunk) <= ENCODE_CHARS:
            yield chunk.encode("utf-8")
            continue
        for at in range(0, len(chunk), ENCODE_CHARS):
            yield chunk[at : at + ENCODE_CHARS].encode("utf-8")


def _input_messages(text: str) -> int | None:
    from inspector.core.errors import ScenarioError

    if text == "all":
        return None
    if not text.isdigit() or int(text) < 1:
        raise ScenarioError(f"export --input-messages {text!r}: a number from 1, or all")
    return int(text)


def _export_otel(record: RunRecord, args: argparse.Namespace, out: TextIO) -> int:
    from inspector.formats.otel_export import otlp_json_chunks, run_to_otlp

    cap = _input_messages(args.input_messages)
    if args.otlp_endpoint:
        from inspector.formats.otlp_push import parse_headers, push, traces_url

        document = run_to_otlp(record, content=not args.no_content, input_messages=cap)
        count = push(document, args.otlp_endpoint, parse_headers(args.headers))
        url = traces_url(args.otlp_endpoint)
        print(f"sent run {record.run_id} ({count} spans) to {url}", file=sys.stderr)
        return 0
    # Written span by span: the document is never whole in memory (a long run's is large).
    gc.freeze()
    chunks = otlp_json_chunks(record, content=not args.no_content, input_messages=cap)
    if args.out is None:
        out.writelines(chunks)
        return 0
    _write_atomically(Path(args.out), chunks)
    print(f"exported run {record.run_id} as otel to {args.out}", file=sys.stderr)
    return 0


def _write_atomically(path: Path, chunks: Iterable[str]) -> None:
    """All or nothing: a failed export never leaves half a file where the user expects one; a
    path that cannot take a file is bad input (exit 2)."""
    from inspector.core.files import write_output

    write_output(path, _encoded(chunks), "export --out")
