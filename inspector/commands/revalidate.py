"""``agent-inspector revalidate``: re-run validators over recorded outputs, no model call.

``revalidate RUN_ID`` re-judges one run and lists the verdicts that flip; ``revalidate --scenario
NAME`` re-judges every recorded run of a scenario into a pass/fail matrix. ``--validators FILE``
replaces the validators: a TOML file's ``[[validators]]`` list, or a python file whose functions
replace the same-named python validators. Exit 0 when (every) run re-judged has an output that
passes all validators, 1 otherwise; 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument

if TYPE_CHECKING:
    from inspector.core.records import RunRecord
    from inspector.core.revalidate import Matrix, MatrixRow, Revalidation

NAME = "revalidate"
HELP = "re-run validators over a run's recorded outputs (no model call)"
EXIT_OK, EXIT_FAILED = 0, 1
MARKS = {"pass": "P", "fail": "F", "error": "E"}


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
    import asyncio

    from inspector.core.recording import scenario_of
    from inspector.core.revalidate import ValidatorSet, read_validator_file, revalidate

    scenario = scenario_of(record)
    chosen = read_validator_file(file, scenario) if file else ValidatorSet.of(scenario)
    return asyncio.run(revalidate(record, scenario, chosen.compile(scenario)))


# ---- text output ---------------------------------------------------------------------------------


def _verdict(status: str, name: str, reason: str) -> str:
    from inspector.core.records import VERDICT_MARK

    return f"{VERDICT_MARK[status]} {name}" + (f": {reason}" if status != "pass" and reason else "")


def accepted_text(step: int | None) -> str:
    """Which step's output was accepted: ``step 4``, or ``none``."""
    return f"step {step}" if step is not None else "none"


def format_result(result: Revalidation) -> str:
    lines = [
        f"run {result.run_id} ({result.scenario}) · {result.outputs} output(s) re-judged, "
        "no model call"
    ]
    by_step: dict[int, list[str]] = {}
    for v in result.verdicts:
        by_step.setdefault(v.step, []).append(_verdict(v.status, v.validator, v.reason))
    for step, verdicts in by_step.items():
        lines.append(f"#{step:<3} " + "  ".join(verdicts))
    if result.flips:
        lines.append(f"{len(result.flips)} flip(s):")
        for f in result.flips:
            lines.append(f"  #{f.step} {f.validator}: {f.before or '-'} → {f.after or '-'}")
    else:
        lines.append("no verdict flips")
    lines.append(
        f"accepted output: {accepted_text(result.accepted_before)} as recorded, "
        f"{accepted_text(result.accepted_after)} now"
    )
    return "\n".join(lines)


def format_matrix(table: Matrix) -> str:
    """Rows are runs, columns validators; a cell has one letter per judged output, in step
    order (P pass, F fail, E error)."""
    head = ["run_id", "status", *table.validators, "before", "now", "flips"]
    rows: list[list[str]] = [head]
    errors: dict[int, str] = {}  # row position -> why it could not be re-validated
    for r in table.rows:
        if r.error is not None:
            errors[len(rows)] = f"cannot re-validate: {r.error}"
            rows.append([r.run_id, r.status])
            continue
        cells = ["".join(MARKS[s] for s in r.cells.get(v, [])) or "-" for v in table.validators]
        before = "pass" if r.passed_before else "fail"
        now = f"pass (#{r.accepted_after})" if r.passed_after else "fail"
        rows.append([r.run_id, r.status, *cells, before, now, str(r.flips)])
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(len(head))]
    lines = [f"scenario {table.scenario} · {len(table.rows)} run(s) re-validated, no model call"]
    for at, row in enumerate(rows):
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        if at in errors:
            cells.append(errors[at])
        lines.append("  ".join(cells).rstrip())
    lines.append("cells: one letter per judged output, in step order (P pass, F fail, E error)")
    return "\n".join(lines)


# ---- the command ---------------------------------------------------------------------------------


def _matrix(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.core.errors import InspectorError, ScenarioError
    from inspector.core.revalidate import error_row, matrix, matrix_row
    from inspector.store import Store

    rows: list[MatrixRow] = []
    with Store.open(args.db) as store:
        summaries = store.runs(scenario=args.scenario)
        if not summaries:
            raise InspectorError(f"no recorded run of scenario {args.scenario!r} in {store.path}")
        for summary in summaries:
            try:
                record = store.load(summary.run_id)
                rows.append(matrix_row(record, recheck(record, args.validators)))
            except ScenarioError as exc:
                if args.validators is not None:
                    raise  # the file is at fault, not this run
                rows.append(error_row(summary.run_id, summary.started_at, summary.status, str(exc)))
            except InspectorError as exc:  # e.g. a run still being recorded
                rows.append(error_row(summary.run_id, summary.started_at, summary.status, str(exc)))
    table = matrix(args.scenario, rows)
    if args.json:
        json.dump(table.model_dump(mode="json"), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(format_matrix(table) + "\n")
    ok = all(r.error is None and r.passed_after for r in table.rows)
    return EXIT_OK if ok else EXIT_FAILED


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.core.errors import ScenarioError
    from inspector.store import Store

    if [args.run_id, args.scenario, args.sweep].count(None) != 2:
        raise ScenarioError(
            "revalidate: give a RUN_ID or --scenario NAME (one of them), or --sweep SWEEP_ID"
        )
    if args.sweep is not None:
        from inspector.commands.sweep_run import revalidate_sweep

        return revalidate_sweep(args, out)
    if args.scenario is not None:
        return _matrix(args, out)
    with Store.open(args.db) as store:
        record = store.load(args.run_id)
    result = recheck(record, args.validators)
    if args.json:
        json.dump(result.model_dump(mode="json"), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(format_result(result) + "\n")
    return EXIT_OK if result.accepted_after is not None else EXIT_FAILED
