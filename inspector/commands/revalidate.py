"""``agent-inspector revalidate``: re-run validators over recorded outputs, no model call.

``revalidate RUN_ID`` re-judges one run and lists the verdicts that flip; ``revalidate --scenario
NAME`` re-judges every recorded run of a scenario into a pass/fail matrix. ``--validators FILE``
replaces the validators: a TOML file's ``[[validators]]`` list, or a python file whose functions
replace the same-named python validators. Exit 0 when (every) run re-judged has an output that
passes all validators, 1 otherwise; 2 for bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument, open_store_for_reading

if TYPE_CHECKING:
    from inspector.core.records import RunRecord
    from inspector.core.revalidate import Revalidation

NAME = "revalidate"
HELP = "re-run validators over a run's recorded outputs (no model call)"
EXIT_OK, EXIT_FAILED = 0, 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_id", metavar="RUN_ID", nargs="?", help="the recorded run (a unique prefix works)"
    )
    parser.add_argument(
        "--scenario", metavar="NAME", help="every recorded run of this scenario: a pass/fail matrix"
    )
    parser.add_argument(
        "--sweep",
        metavar="SWEEP_ID",
        help="every run of a sweep: each arm's pass rate recomputed, ranking changes named",
    )
    parser.add_argument(
        "--validators",
        metavar="FILE",
        type=Path,
        help="a .toml with [[validators]] (replaces them all) or a .py whose functions replace "
        "the same-named python validators",
    )
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def recheck(record: RunRecord, file: Path | None) -> Revalidation:
    """One run re-judged by its scenario's validators, or those ``file`` gives."""
    from inspector.workflows.revalidate import recheck

    return recheck(record, file)


# ---- the command ---------------------------------------------------------------------------------


def _matrix(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.reports.revalidate_text import format_matrix
    from inspector.workflows.revalidate import revalidate_scenario

    with open_store_for_reading(args.db) as store:
        table = revalidate_scenario(store, args.scenario, args.validators)
    if args.json:
        from inspector.reports.record_json import write_json

        write_json(table.model_dump(mode="json"), out)
    else:
        out.write(format_matrix(table) + "\n")
    ok = all(r.error is None and r.passed_after for r in table.rows)
    return EXIT_OK if ok else EXIT_FAILED


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.core.errors import ScenarioError
    from inspector.reports.revalidate_text import format_result

    if [args.run_id, args.scenario, args.sweep].count(None) != 2:
        raise ScenarioError(
            "revalidate: give a RUN_ID or --scenario NAME (one of them), or --sweep SWEEP_ID"
        )
    if args.sweep is not None:
        from inspector.commands.sweep_run import revalidate_sweep

        return revalidate_sweep(args, out)
    if args.scenario is not None:
        return _matrix(args, out)
    with open_store_for_reading(args.db) as store:
        record = store.load(args.run_id)
    result = recheck(record, args.validators)
    if args.json:
        from inspector.reports.record_json import write_json

        write_json(result.model_dump(mode="json"), out)
    else:
        out.write(format_result(result) + "\n")
    return EXIT_OK if result.accepted_after is not None else EXIT_FAILED
