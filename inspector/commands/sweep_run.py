"""The sweep commands: ``sweep``, ``sweeps``, ``export SWEEP_ID`` and ``revalidate --sweep``
(issue 15) — printed lines and exit codes over the use case the window shares
(``inspector/workflows/sweeps.py``); the statistics are ``inspector.sweeps``."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.core.errors import ScenarioError
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario
from inspector.sweeps.model import SweepSpec
from inspector.sweeps.report import build_report
from inspector.sweeps.runner import Job, Progress
from inspector.workflows.sweeps import (
    FACTS,
    arm_scenarios,
    is_sweep_id,
    jobs_for,
    new_sweep_id,
    now_utc,
    report_of,
    run_sweep,
    scenario_ref,
)

__all__ = [  # the shared use case's names the commands (and their tests) use from here
    "FACTS",
    "ProgressLine",
    "arm_scenarios",
    "execute",
    "is_sweep_id",
    "jobs_for",
    "new_sweep_id",
    "now_utc",
    "report_of",
    "say",
    "scenario_ref",
]

if TYPE_CHECKING:
    import httpx

    from inspector.core.provider import Provider
    from inspector.store import Store


class ProgressLine:
    """The live ``done/total · failed · ETA`` line on a terminal (redrawn at most 5 times a
    second; nothing when stderr is not a terminal)."""

    def __init__(self, total: int, stream: TextIO, clock: Callable[[], float] = time.perf_counter):
        self.progress = Progress(total=total, started=clock())
        self.stream = stream
        self.clock = clock
        self.live = stream.isatty()
        self._drawn = 0.0

    def __call__(self, job: Job, record: RunRecord) -> None:
        self.progress.add(record)
        now = self.clock()
        if self.live and (now - self._drawn >= 0.2 or self.progress.done == self.progress.total):
            self._drawn = now
            self.stream.write("\r" + self.progress.line(now) + "\x1b[K")
            self.stream.flush()

    def end(self) -> None:
        if self.live:
            self.stream.write("\r" + self.progress.line(self.clock()) + "\x1b[K\n")
            self.stream.flush()


def execute(
    store: Store,
    sweep_id: str,
    spec: SweepSpec,
    jobs: Sequence[Job],
    *,
    progress: Callable[[Job, RunRecord], None],
    make_provider: Callable[[Scenario, httpx.AsyncClient | None], Provider] | None = None,
) -> None:
    """Runs ``jobs`` recording each run against its slot. Ctrl+C: the runs in flight end
    ``cancelled``, the finished ones stay, and KeyboardInterrupt goes on to the caller."""
    asyncio.run(
        run_sweep(store, sweep_id, spec, jobs, progress=progress, make_provider=make_provider)
    )


def say(text: str) -> None:
    print(text, file=sys.stderr)


def export_sweep(
    args: argparse.Namespace, out: TextIO, write: Callable[[Path, Iterable[str]], None]
) -> int:
    """``export SWEEP_ID --format csv|json|html``: the report, as the CLI shows it."""
    import json

    from inspector.commands import open_store_for_reading
    from inspector.reports.redact import redact, scrub_keys
    from inspector.sweeps.render import format_csv, format_html

    fmt = args.format or "csv"
    if getattr(args, "otlp_endpoint", None) is not None:
        raise ScenarioError("export --otlp-endpoint: a sweep exports as csv, json or html")
    if fmt not in ("csv", "json", "html"):  # a run's format (jsonl, otel)
        raise ScenarioError(f"export --format {fmt}: a sweep exports as csv, json or html")
    with open_store_for_reading(args.db) as store:
        report = report_of(store, store.sweep(args.run_id))
    # A second line of defence (a sweep takes no credential): nothing key-shaped leaves.
    if fmt == "json":
        data = redact(report.model_dump(mode="json"))
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        text = scrub_keys(format_csv(report) if fmt == "csv" else format_html(report))
    if args.out is None:
        out.write(text)
        return 0
    write(Path(args.out), [text])
    say(f"exported sweep {report.sweep_id} as {fmt} to {args.out}")
    return 0


def revalidate_sweep(args: argparse.Namespace, out: TextIO) -> int:
    """``revalidate --sweep SWEEP_ID [--validators FILE]``: exit 0 when no arm changes place."""

    from inspector.commands import open_store_for_reading
    from inspector.commands.revalidate import recheck
    from inspector.sweeps.report import counted
    from inspector.sweeps.rerank import compare, format_revalidation, rejudged

    with open_store_for_reading(args.db) as store:
        sweep = store.sweep(args.sweep)
        spec = SweepSpec.model_validate(sweep.spec)
        facts = FACTS.validate_python(store.sweep_runs(sweep.sweep_id))
        runs = list(counted(facts).values())
        passes = {
            r.run_id: recheck(store.load(r.run_id), args.validators).accepted_after is not None
            for r in runs
        }
    before = build_report(sweep.sweep_id, sweep.created_at, spec, runs)
    after_facts = [rejudged(r, passes[r.run_id]) for r in runs]
    after = build_report(sweep.sweep_id, sweep.created_at, spec, after_facts)
    result = compare(before, after, passes, runs)
    if args.json:
        from inspector.reports.record_json import write_json

        write_json(result.model_dump(mode="json"), out)
    else:
        out.write(format_revalidation(result) + "\n")
    return 1 if result.rank_changed else 0
