"""``agent-inspector runs``: list recorded runs, newest first."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from inspector.commands import NoStoreYet, add_db_argument, open_store_for_reading
from inspector.reports.run_differences import differences

if TYPE_CHECKING:
    from inspector.store import RunSummary

NAME = "runs"
HELP = "list recorded runs, newest first"
COLUMNS = (
    "run_id",
    "scenario",
    "status",
    "termination",
    "started_at",
    "steps",
    "tokens",
    "replay_of",
    "differs",
)
NUMERIC = {"steps", "tokens"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the runs as a JSON list")
    parser.add_argument("--scenario", metavar="NAME", help="only the runs of this scenario")
    parser.add_argument(
        "--limit", metavar="N", type=_non_negative, help="at most N runs (the newest)"
    )


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def row(summary: RunSummary) -> dict[str, str]:
    """One table row: tokens as input+output, a missing value as "-"."""
    return {
        "run_id": summary.run_id,
        "scenario": summary.scenario,
        "status": summary.status,
        "termination": summary.termination or "-",
        "started_at": summary.started_at,
        "steps": str(summary.steps),
        "tokens": f"{summary.input_tokens}+{summary.output_tokens}",
        "replay_of": summary.replay_of or "-",
        # The overrides only: replay_of has its own column here.
        "differs": differences(summary.overrides, None) or "-",
    }


def format_table(summaries: Sequence[RunSummary]) -> str:
    """Aligned columns (numbers to the right); a one-line note when there is nothing."""
    if not summaries:
        return "no runs recorded yet"
    rows = [dict(zip(COLUMNS, COLUMNS, strict=True)), *(row(s) for s in summaries)]
    widths = {c: max(len(r[c]) for r in rows) for c in COLUMNS}
    lines = []
    for r in rows:
        cells = [r[c].rjust(widths[c]) if c in NUMERIC else r[c].ljust(widths[c]) for c in COLUMNS]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main(args: argparse.Namespace, out: TextIO) -> int:
    try:
        with open_store_for_reading(args.db) as store:
            summaries, path = store.runs(scenario=args.scenario, limit=args.limit), store.path
    except NoStoreYet as exc:  # a fresh machine: nothing recorded, and nothing created to say so
        summaries, path = [], exc.path
    if args.json:
        from inspector.reports.record_json import write_json

        write_json([s.model_dump(mode="json") for s in summaries], out)
    elif not summaries and args.scenario:
        out.write(f"no run of scenario {args.scenario!r} in {path}\n")
    else:
        out.write(format_table(summaries) + "\n")
    return 0
