"""``agent-inspector import FILE``: another tool's trace, message history or request log stored
as runs (docs/formats.md). Each run carries a fidelity report: what a replay of it would miss."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument

if TYPE_CHECKING:
    from inspector.core.records import RunRecord
    from inspector.store import Store

NAME = "import"
HELP = (
    "store an OpenTelemetry trace, Pydantic AI history, OpenAI JSONL log or an agent-inspector"
    " JSONL export as runs"
)
FORMATS = ("auto", "otel", "pydantic-ai", "openai-jsonl", "inspector-jsonl")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the file to import")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="what the file is (default: auto, from its content)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the stored run record (a list when the file held several runs)",
    )
    add_db_argument(parser)


def main(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from inspector.core.loop import new_run_id
    from inspector.formats.importing import import_file
    from inspector.store import Store

    # Everything is read and checked before the store is opened: a bad file stores nothing.
    records = import_file(Path(args.file), args.format, new_run_id)
    with Store.open(args.db) as store:
        for record in records:
            if _stored(store, record.run_id):  # our own export, imported where it came from
                record.run_id = new_run_id()
            store.save(record)
        stored = [store.load(r.run_id) for r in records]
    if args.json:
        dumped = [r.model_dump(mode="json") for r in stored]
        from inspector.reports.record_json import write_json

        write_json(dumped[0] if len(dumped) == 1 else dumped, out)
        return 0
    for record in stored:
        out.write(summary_line(record) + "\n")
    return 0


def _stored(store: Store, run_id: str) -> bool:
    from inspector.store import RunNotFound

    try:
        return store.load(run_id).run_id == run_id
    except RunNotFound:
        return False


def summary_line(record: RunRecord) -> str:
    """``imported run ID: N steps, STATUS; replayable`` or ``...; replay would miss: a, b``."""
    fidelity = record.fidelity
    steps = f"{len(record.steps)} step{'s' if len(record.steps) != 1 else ''}"
    line = f"imported run {record.run_id}: {steps}, {record.status}"
    if fidelity is None:
        return line
    gaps = ", ".join(fidelity.lacks())
    return f"{line}; {fidelity.replay_verdict()}" + (f"; the source lacks: {gaps}" if gaps else "")
