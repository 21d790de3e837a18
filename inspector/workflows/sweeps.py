"""The sweep use case the command line and the window share (issue 15): each arm's scenario
checked, a job per slot, every run recorded against its slot, the report read back. The
statistics themselves are ``inspector.sweeps`` (pure); presenting them is each front end's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from inspector.core.errors import ScenarioError
from inspector.core.loop import Turn
from inspector.core.provider import ProviderChunk
from inspector.core.records import RunRecord, StepRequest
from inspector.core.scenario import Scenario
from inspector.sweeps.grid import run_seed
from inspector.sweeps.model import RunFacts, SweepReport, SweepSpec
from inspector.sweeps.report import build_report
from inspector.sweeps.runner import Job, run_jobs
from inspector.workflows.sweep_ids import SWEEP_PREFIX
from inspector.workflows.sweep_ids import is_sweep_id as is_sweep_id  # re-exported

if TYPE_CHECKING:
    import httpx

    from inspector.core.provider import Provider
    from inspector.providers.http import KeyringGet
    from inspector.store import Store, StoredSweep

FACTS = TypeAdapter(list[RunFacts])  # one validation call for a sweep's rows


def new_sweep_id() -> str:
    return SWEEP_PREFIX + uuid.uuid4().hex[:10]


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


def start_sweep(store: Store, spec: SweepSpec) -> tuple[str, list[Job]]:
    """A new sweep: its arms checked first (nothing is stored for a bad grid), then the sweep
    stored, and a job for every slot."""
    scenarios = arm_scenarios(spec)
    sweep_id = new_sweep_id()
    store.create_sweep(sweep_id, scenarios[0].name, now_utc(), spec.model_dump(mode="json"))
    return sweep_id, jobs_for(spec, scenarios, spec.slots())


async def run_sweep(
    store: Store,
    sweep_id: str,
    spec: SweepSpec,
    jobs: Sequence[Job],
    *,
    progress: Callable[[Job, RunRecord], None],
    make_provider: Callable[[Scenario, httpx.AsyncClient | None], Provider] | None = None,
) -> None:
    """Runs ``jobs`` on the running loop (the command's ``asyncio.run``, the window's qasync
    loop), recording each run against its slot. Cancelling the awaiting task ends the runs in
    flight ``cancelled``; the finished ones stay."""
    from inspector.providers.factory import build_provider

    recorder = store.recorder()
    keyring = _shared_keyring(jobs)

    def build_shared(scenario: Scenario, client: httpx.AsyncClient | None) -> Provider:
        return build_provider(scenario, client=client, keyring_get=keyring)

    build = make_provider or build_shared

    def on_start(job: Job, run_id: str) -> None:
        store.add_sweep_run(sweep_id, run_id, job.arm, job.rep)

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
