"""``agent-inspector compare RUN_ID RUN_ID ...``: side-by-side table of runs of one turn."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from inspector.commands import add_db_argument, open_store_for_reading

NAME = "compare"
HELP = "side-by-side table of runs of one turn"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("first", metavar="RUN_ID", help="a recorded run (a unique prefix works)")
    parser.add_argument("others", metavar="RUN_ID", nargs="+", help="runs to compare it with")
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--any-scenario",
        action="store_true",
        help="compare runs of different scenarios too (e.g. after renaming one); warns",
    )
    parser.add_argument(
        "--width", type=int, default=100, metavar="N", help="table width (default 100)"
    )


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.core.errors import ScenarioError
    from inspector.reports.compare import compare_runs
    from inspector.reports.compare_text import render_comparison
    from inspector.workflows.compare import different_scenarios

    with open_store_for_reading(args.db) as store:
        records = [store.load(run_id) for run_id in [args.first, *args.others]]
    listed = different_scenarios(records)
    if listed is not None:
        if not args.any_scenario:
            raise ScenarioError(
                f"compare: the runs are of different scenarios ({listed}); "
                "compare runs of one turn, or pass --any-scenario"
            )
        print(
            f"agent-inspector: warning: comparing different scenarios ({listed})", file=sys.stderr
        )
    comparison = compare_runs(records)
    if args.json:
        from inspector.reports.record_json import write_json

        write_json(comparison.model_dump(mode="json"), out)
    else:
        out.write(render_comparison(comparison, width=args.width))
    return 0
