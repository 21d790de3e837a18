"""The sweep use case behind ``sweep``, ``sweeps``, ``export SWEEP_ID`` and ``revalidate --sweep``
(issue 15): builds the arms' scenarios, records every run against its slot, reads the report
back. The statistics themselves are ``inspector.sweeps`` (pure, for a window too)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pydantic import TypeAdapter

from inspector.core.errors import ScenarioError
from inspector.core.loop import Turn
from inspector.core.provider import ProviderChunk
from inspector.core.records import RunRecord, StepRequest
from inspector.core.scenario import Scenario
from inspector.sweeps.grid import run_seed
from inspector.sweeps.model import RunFacts, SweepReport, SweepSpec
from inspector.sweeps.report import build_report
from inspector.sweeps.runner import Job, Progress, run_jobs

if TYPE_CHECKING:
    import httpx

    from inspector.core.provider import Provider
    from inspector.providers.http import KeyringGet
    from inspector.store import Store, StoredSweep

FACTS = TypeAdapter(list[RunFacts])  # one validation call for a sweep's rows
SWEEP_PREFIX = "sw"  # "s" and "w" are no hex digits: a sweep id never prefixes a run id


def new_sweep_id() -> str:
    return SWEEP_PREFIX + uuid.uuid4().hex[:10]


def is_sweep_id(text: str) -> bool:
    return text.startswith(SWEEP_PREFIX)


def scenario_ref(ref: str) -> str:
    """What the spec keeps: ``demo:NAME`` as is, a path made absolute (``--resume`` from any
    folder loads the same file)."""
    from inspector.resources import DEMO_PREFIX

    return ref if ref.startswith(DEMO_PREFIX) else str(Path(ref).resolve())


class _NotCalled:
    """A provider for checking that a turn builds (its python validators and tools load)."""

    name = "check"

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        raise AssertionError("never called")
        yield  # pragma: no cover


def arm_scenarios(spec: SweepSpec) -> list[Scenario]:
    """Each arm's scenario, checked before any run starts: a bad grid is one line naming the
    arm, the field and the value."""
    from inspector.resources import resolve_scenario

    scenarios = []
    for arm in spec.arms:
        try:
            scenario = resolve_scenario(spec.scenario, [*spec.overrides, *arm.overrides])
            Turn(scenario, _NotCalled())
        except ScenarioError as exc:
            raise ScenarioError(f"sweep: arm {arm.name!r}: {exc}") from None
        scenarios.append(scenario)
    names = [a.name for a in spec.arms]
    if spec.baseline not in names:
        raise ScenarioError(f"--baseline {spec.baseline!r}: no such arm (arms: {', '.join(names)})")
    return scenarios


def jobs_for(
    spec: SweepSpec, scenarios: Sequence[Scenario], slots: Sequence[tuple[int, int]]
) -> list[Job]:
    """A job per slot; the scripted model's seed per run comes from the sweep's seed, and is
    recorded as an override (and in the scenario the record keeps), so a replay draws alike."""
    jobs = []
    for arm, rep in slots:
        scenario = scenarios[arm]
        overrides = [*spec.overrides, *spec.arms[arm].overrides]
        if scenario.model.provider == "scripted":
            seed = run_seed(spec.seed, spec.arms[arm].name, rep)
            model = scenario.model.model_copy(update={"seed": seed})
            scenario = scenario.model_copy(update={"model": model})
            overrides.append(f"model.seed={seed}")
        jobs.append(Job(arm=arm, rep=rep, scenario=scenario, overrides=overrides))
    return jobs


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
    from inspector.providers.factory import build_provider

    recorder = store.recorder()
    keyring = _shared_keyring(jobs)

    def build_shared(scenario: Scenario, client: httpx.AsyncClient | None) -> Provider:
        return build_provider(scenario, client=client, keyring_get=keyring)

    build = make_provider or build_shared

    def on_start(job: Job, run_id: str) -> None:
        store.add_sweep_run(sweep_id, run_id, job.arm, job.rep)

    async def main() -> None:
        client = _shared_client(jobs, spec.concurrency)
        try:
            await run_jobs(
                jobs,
                concurrency=spec.concurrency,
                make_provider=lambda scenario: build(scenario, client),
                sink=recorder,
                on_start=on_start,
                on_finish=progress,
            )
        finally:
            if client is not None:
                await client.aclose()

    asyncio.run(main())


def _shared_keyring(jobs: Sequence[Job]) -> KeyringGet | None:
    if all(j.scenario.model.provider == "scripted" for j in jobs):
        return None
    from inspector.providers.pool import shared_keyring

    return shared_keyring()


def _shared_client(jobs: Sequence[Job], concurrency: int) -> httpx.AsyncClient | None:
    http = next((j.scenario.model for j in jobs if j.scenario.model.provider != "scripted"), None)
    if http is None:
        return None  # scripted runs never load httpx
    from inspector.providers.pool import shared_client

    return shared_client(http, concurrency)


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def report_of(store: Store, sweep: StoredSweep) -> SweepReport:
    spec = SweepSpec.model_validate(sweep.spec)
    facts = FACTS.validate_python(store.sweep_runs(sweep.sweep_id))
    return build_report(sweep.sweep_id, sweep.created_at, spec, facts)


def say(text: str) -> None:
    print(text, file=sys.stderr)


def export_sweep(
    args: argparse.Namespace, out: TextIO, write: Callable[[Path, Iterable[str]], None]
) -> int:
    """``export SWEEP_ID --format csv|json|html``: the report, as the CLI shows it."""
    import json

    from inspector.reports.redact import redact, scrub_keys
    from inspector.store import Store
    from inspector.sweeps.render import format_csv, format_html

    fmt = args.format or "csv"
    if fmt == "jsonl":
        raise ScenarioError("export --format jsonl: a sweep exports as csv, json or html")
    with Store.open(args.db) as store:
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
    import json

    from inspector.commands.revalidate import recheck
    from inspector.store import Store
    from inspector.sweeps.report import counted
    from inspector.sweeps.rerank import compare, format_revalidation, rejudged

    with Store.open(args.db) as store:
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
        json.dump(result.model_dump(mode="json"), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(format_revalidation(result) + "\n")
    return 1 if result.rank_changed else 0
