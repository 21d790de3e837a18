"""Running a sweep's jobs: at most ``concurrency`` turns at once, each on its own provider.

Pure asyncio over injected seams (a provider factory, the event sink, start/finish callbacks),
so the engine's rules hold: the command line gives it the store's recorder and HTTP providers
sharing one client; tests give it scripted ones. Cancelling the task that awaits ``run_jobs``
(Ctrl+C) ends every turn in flight ``cancelled`` — each turn records that itself — and starts
no new one; what finished stays recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from inspector.core.events import EventSink
from inspector.core.loop import Turn, new_run_id
from inspector.core.provider import Provider, close_provider
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario


@dataclass(frozen=True)
class Job:
    """One run of a sweep: its slot and the scenario it runs (the arm's, with its seed)."""

    arm: int
    rep: int
    scenario: Scenario
    overrides: list[str]


@dataclass
class Progress:
    """Runs done out of the total, failures so far, and the ETA they imply."""

    total: int
    done: int = 0
    failures: int = 0  # finished with a status other than succeeded / fallback
    started: float = field(default_factory=time.perf_counter)

    def add(self, record: RunRecord) -> None:
        if record.status == "cancelled":
            return
        self.done += 1
        if record.status not in ("succeeded", "fallback"):
            self.failures += 1

    def eta_s(self, now: float) -> float | None:
        if self.done == 0:
            return None
        return (now - self.started) / self.done * (self.total - self.done)

    def line(self, now: float) -> str:
        eta = self.eta_s(now)
        eta_text = "-" if eta is None else f"{eta:.0f}s" if eta < 600 else f"{eta / 60:.0f}min"
        return (
            f"{self.done}/{self.total} runs · {self.failures} failed · "
            f"{now - self.started:.0f}s elapsed · ETA {eta_text}"
        )


async def _run_one(
    job: Job, run_id: str, make_provider: Callable[[Scenario], Provider], sink: EventSink
) -> RunRecord:
    provider = make_provider(job.scenario)
    try:
        turn = Turn(job.scenario, provider, sink, run_id=run_id, overrides=job.overrides)
        return await turn.run()
    finally:
        await close_provider(provider)


async def run_jobs(
    jobs: Sequence[Job],
    *,
    concurrency: int,
    make_provider: Callable[[Scenario], Provider],
    sink: EventSink,
    on_start: Callable[[Job, str], None],
    on_finish: Callable[[Job, RunRecord], None],
) -> None:
    """Runs ``jobs`` with ``concurrency`` workers. ``on_start(job, run_id)`` is called before a
    turn emits anything (the store maps the run to its slot), ``on_finish`` with its record."""
    pending: Iterator[Job] = iter(jobs)
    stopping = False

    async def worker() -> None:
        nonlocal stopping
        for job in pending:  # a shared iterator: each job is taken by one worker
            # A turn that never waits (scripted, replayed) runs start to end in one step: without
            # this, a worker would run all its jobs without the loop getting a turn — a window
            # would not paint and a cancel would land only when every job was done.
            await asyncio.sleep(0)
            if stopping:
                return
            run_id = new_run_id()
            on_start(job, run_id)
            record = await _run_one(job, run_id, make_provider, sink)
            on_finish(job, record)
            if record.status == "cancelled":
                stopping = True  # the turn swallowed our cancellation: stop here, start nothing
                return

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(jobs))))]
    try:
        await asyncio.gather(*workers)
    finally:
        stopping = True
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
