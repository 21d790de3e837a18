"""``agent-inspector sweep``: N runs per arm of a grid of scenario settings, with per-arm
statistics (docs/sweeps.md). ``sweep --resume SWEEP_ID`` runs only the missing runs.

Exit codes: 0 when the sweep ran to its end, 1 when it was cancelled (Ctrl+C; finished runs are
kept), 2 for bad input (a bad grid: one line naming the arm, field and value; a ``--resume`` id
the store does not hold, or no store there).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument, add_set_argument, open_recorded_store

if TYPE_CHECKING:
    from inspector.sweeps.model import SweepSpec

NAME = "sweep"
HELP = "run a scenario N times per arm of a grid of settings; pass rates, costs, terminations"
EXIT_OK, EXIT_CANCELLED = 0, 1
DEFAULT_CONCURRENCY = 4


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario", metavar="SCENARIO", nargs="?", help="a scenario .toml file or demo:NAME"
    )
    parser.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="SECTION.KEY=V1,V2",
        help="a field and its values (the grid is the product of all --vary); @FILE reads a "
        "value from a file",
    )
    parser.add_argument(
        "--arm",
        action="append",
        default=[],
        metavar="NAME=PRESET.toml",
        help="a named arm setting the fields of a preset file's tables",
    )
    parser.add_argument(
        "--repeat", type=_positive, default=10, metavar="N", help="runs per arm (default 10)"
    )
    parser.add_argument(
        "--concurrency",
        type=_positive,
        metavar="K",
        help=f"runs at once (default {DEFAULT_CONCURRENCY}; --resume: the sweep's own)",
    )
    parser.add_argument(
        "--seed", type=_seed, metavar="S", help="the seed of the scripted model's choices"
    )
    parser.add_argument("--baseline", metavar="ARM", help="the arm others are compared with")
    parser.add_argument(
        "--resume", metavar="SWEEP_ID", help="run only the missing runs of a stored sweep"
    )
    add_set_argument(parser)
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _new_spec(args: argparse.Namespace) -> SweepSpec:
    from inspector.commands.sweep_run import scenario_ref
    from inspector.core.errors import ScenarioError
    from inspector.sweeps.grid import build_arms, refuse_credentials
    from inspector.sweeps.model import SweepSpec

    if args.scenario is None:
        raise ScenarioError("sweep: give a SCENARIO (or --resume SWEEP_ID)")
    arms = build_arms(args.vary, args.arm, Path("."))
    refuse_credentials([*args.overrides, *(o for a in arms for o in a.overrides)])
    return SweepSpec(
        scenario=scenario_ref(args.scenario),
        overrides=list(args.overrides),
        arms=arms,
        repeat=args.repeat,
        seed=args.seed if args.seed is not None else random.randrange(2**31),
        baseline=args.baseline or arms[0].name,
        concurrency=args.concurrency or DEFAULT_CONCURRENCY,
    )


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.commands import sweep_run as use
    from inspector.core.errors import ScenarioError
    from inspector.store import Store
    from inspector.sweeps.model import SweepSpec
    from inspector.sweeps.render import format_text

    if args.resume is not None and (
        args.scenario or args.vary or args.arm or args.overrides or args.seed is not None
    ):
        raise ScenarioError("sweep --resume SWEEP_ID: the grid is the stored one; give no other")
    # A resumed sweep is read from its store (which must be there); a new one may create it.
    opened = open_recorded_store(args.db) if args.resume is not None else Store.open(args.db)
    with opened as store:
        if args.resume is not None:
            stored = store.sweep(args.resume)
            spec = SweepSpec.model_validate(stored.spec)
            if args.concurrency is not None:
                spec = spec.model_copy(update={"concurrency": args.concurrency})
            sweep_id = stored.sweep_id
            scenarios = use.arm_scenarios(spec)
            filled = store.filled_slots(sweep_id)
            slots = [s for s in spec.slots() if s not in filled]
        else:
            spec = _new_spec(args)
            scenarios = use.arm_scenarios(spec)  # checked before anything is stored
            sweep_id = use.new_sweep_id()
            store.create_sweep(
                sweep_id, scenarios[0].name, use.now_utc(), spec.model_dump(mode="json")
            )
            slots = spec.slots()
        jobs = use.jobs_for(spec, scenarios, slots)
        use.say(
            f"sweep {sweep_id}: {len(spec.arms)} arm(s) x {spec.repeat} · {len(jobs)} run(s) "
            f"to do · concurrency {spec.concurrency}"
        )
        line = use.ProgressLine(len(jobs), sys.stderr)
        cancelled = False
        try:
            use.execute(store, sweep_id, spec, jobs, progress=line)
        except KeyboardInterrupt:
            cancelled = True
        line.end()
        report = use.report_of(store, store.sweep(sweep_id))
    if args.json:
        from inspector.reports.record_json import write_json

        write_json(report.model_dump(mode="json"), out)
    else:
        out.write(format_text(report) + "\n")
    if cancelled:
        use.say(
            f"sweep {sweep_id} cancelled: {report.runs}/{report.expected} runs kept; "
            f"agent-inspector sweep --resume {sweep_id} runs the rest"
        )
        return EXIT_CANCELLED
    return EXIT_OK
