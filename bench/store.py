"""Store size and speed as a turn grows, against the naive layout.

What is measured: a synthetic tool-calling turn of N steps streamed into the store through its
recorder, event by event, as the engine would (``RunStarted``, per step ``StepStarted``, text and
tool-call deltas, ``ToolExecuted``, ``StepFinished``, then ``RunFinished``). Every step's request
repeats the whole history, in normalised form (``StepRequest``) and as a raw OpenAI-style body
(``RawExchange``, fresh dicts per step as a provider builds them). Write time is the time spent
inside the recorder; read time is ``Store.load`` (the exact ``RunRecord``); size is the SQLite
file after a checkpoint.

Peer, in the same run: the naive layout — the same two transactions per step (a pending row at
``StepStarted``, the final row at ``StepFinished``), each step's full JSON (request and raw body
as they are) in one column, read back by validating every row. Its size grows with the square of
the turn length; the store's must grow linearly (goal: per-step bytes and write time of a
1,000-step turn within 2x of a 100-step turn's).

Then a 100,000-step run (requests bounded to the last 8 messages, so the record fits in memory)
is written and read back.

Usage: ``python bench/store.py [--write bench/RESULTS.md] [--quick]``. ``--quick`` runs 100 and
300 steps and 10,000 for the long run (a smoke test). Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from results import write_section  # bench/results.py (this folder is on sys.path)

from inspector.core.events import (
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
    ToolExecuted,
)
from inspector.core.messages import Message, ToolCall, assistant, tool_result, user
from inspector.core.policy import Policy
from inspector.core.records import (
    Budgets,
    RawExchange,
    RunRecord,
    Step,
    StepRequest,
    StepResponse,
    ToolResult,
    ToolSpec,
    Usage,
)
from inspector.store import Store

SECTION = "## Store (bench/store.py)"
LENGTHS = (100, 1000)
QUICK_LENGTHS = (100, 300)
LONG_RUN, QUICK_LONG_RUN = 100_000, 10_000
WINDOW = 8
FLATNESS_GOAL = 2.0
SYSTEM = "You are a research agent. Look things up, then answer in one paragraph."
TOOL = ToolSpec(
    name="lookup",
    description="Search the knowledge base.",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)
RESULT = "Result: " + "the knowledge base says something relevant about this query. " * 3
PIECES = ("Let ", "me ", "look ", "that ", "up.")


@dataclass
class Measure:
    steps: int
    write_s: float
    read_s: float
    size: int

    @property
    def write_ms_per_step(self) -> float:
        return self.write_s * 1000 / self.steps

    @property
    def read_ms_per_step(self) -> float:
        return self.read_s * 1000 / self.steps

    @property
    def bytes_per_step(self) -> float:
        return self.size / self.steps


def wire(message: Message) -> dict[str, Any]:
    return message.model_dump(mode="json")


def turn_events(
    run_id: str, steps: int, *, window: int | None = None, fresh_raw: bool = True
) -> Iterator[Event]:
    """The events of one synthetic turn; with ``window`` each request sends the opening message
    and the last ``window`` messages only."""
    policy = Policy(max_steps=steps + 1)
    header = {
        "run_id": run_id,
        "scenario": f"bench-{steps}",
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        "policy": policy,
        "provider": "openai",
        "model": "bench-model",
    }
    yield RunStarted(**header)
    opening = user("Find out everything about the subject.")
    history: list[Message] = [opening]
    wires: list[dict[str, Any]] = [wire(opening)]
    done: list[Step] = []
    for index in range(1, steps + 1):
        sent = history if window is None else [opening, *history[1:][-window:]]
        sent_wire = wires if window is None else [wires[0], *wires[1:][-window:]]
        request = StepRequest(system=SYSTEM, messages=list(sent), tools=[TOOL], tool_choice="auto")
        yield StepStarted(run_id=run_id, index=index, attempt=1, request=request)
        for piece in PIECES:
            yield TextDelta(run_id=run_id, index=index, text=piece)
        call = ToolCall(id=f"call_{index}", name="lookup", arguments={"q": f"subject {index}"})
        yield ToolCallDelta(run_id=run_id, index=index, call_index=0, id=call.id, name="lookup")
        yield ToolCallDelta(
            run_id=run_id, index=index, call_index=0, arguments_delta=call.arguments_json()
        )
        result = ToolResult(tool_call_id=call.id, name="lookup", content=RESULT)
        yield ToolExecuted(run_id=run_id, index=index, result=result)
        body_messages = [dict(m) if fresh_raw else m for m in sent_wire]
        raw = RawExchange(
            request={
                "model": "bench-model",
                "messages": [{"role": "system", "content": SYSTEM}, *body_messages],
                "tools": [{"type": "function", "function": TOOL.model_dump(mode="json")}],
                "tool_choice": "auto",
                "stream": True,
            },
            response={
                "id": f"chatcmpl-{index}",
                "choices": [{"index": 0, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 50 * len(sent), "completion_tokens": 12},
            },
        )
        response = StepResponse(
            text="".join(PIECES),
            tool_calls=[call],
            finish_reason="tool_calls",
            usage=Usage(input_tokens=50 * len(sent), output_tokens=12),
        )
        step = Step(
            index=index,
            attempt=1,
            status="success",
            request=request,
            response=response,
            tool_results=[result],
            latency_ms=12.5,
            ttft_ms=3.25,
            raw=raw,
        )
        done.append(step)
        yield StepFinished(run_id=run_id, step=step)
        said, got = assistant("".join(PIECES), (call,)), tool_result(call.id, RESULT, "lookup")
        history += [said, got]
        wires += [wire(said), wire(got)]
    record = RunRecord(
        **header,
        duration_ms=1.0,
        status="failed",
        termination="step_cap",
        budgets=Budgets(attempts_used=1, max_attempts=3, steps_used=steps, max_steps=steps + 1),
        steps=done,
        transcript=history,
    )
    yield RunFinished(run_id=run_id, record=record)


def file_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def events_of(run_id: str, steps: int, *, stream: bool, **kwargs: Any) -> Iterable[Event]:
    """The turn's events, built up front (so the garbage collector's work for building them is
    not timed) unless ``stream`` (the long run, which would not fit in memory as events)."""
    events = turn_events(run_id, steps, **kwargs)
    return events if stream else list(events)


def measure_store(folder: Path, steps: int, *, stream: bool = False, **kwargs: Any) -> Measure:
    path = folder / f"store-{steps}.sqlite3"
    run_id = f"bench{steps:07d}"
    elapsed = 0.0
    events = events_of(run_id, steps, stream=stream, **kwargs)
    with Store.open(path) as store:
        recorder = store.recorder()
        for event in events:
            t0 = time.perf_counter()
            recorder(event)
            elapsed += time.perf_counter() - t0
    del events, event
    assert recorder.error is None
    gc.collect()
    with Store.open(path) as store:
        t0 = time.perf_counter()
        record = store.load(run_id)
        read = time.perf_counter() - t0
    assert len(record.steps) == steps and record.steps[-1].status == "success"
    return Measure(steps, elapsed, read, file_size(path))


NAIVE_SCHEMA = """
CREATE TABLE steps (run_id TEXT, idx INTEGER, status TEXT, json TEXT, PRIMARY KEY (run_id, idx))
"""


def measure_naive(folder: Path, steps: int) -> Measure:
    """The naive layout: each step's full JSON, request and raw body included, as it is."""
    path = folder / f"naive-{steps}.sqlite3"
    run_id = f"naive{steps:07d}"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(NAIVE_SCHEMA)
    elapsed = 0.0
    events = events_of(run_id, steps, stream=False)
    for event in events:
        t0 = time.perf_counter()
        if isinstance(event, StepStarted):
            with conn:
                conn.execute("BEGIN")
                conn.execute(
                    "INSERT INTO steps VALUES (?, ?, 'pending', ?)",
                    (run_id, event.index, event.request.model_dump_json()),
                )
        elif isinstance(event, StepFinished):
            with conn:
                conn.execute("BEGIN")
                conn.execute(
                    "UPDATE steps SET status = ?, json = ? WHERE run_id = ? AND idx = ?",
                    (event.step.status, event.step.model_dump_json(), run_id, event.step.index),
                )
        elapsed += time.perf_counter() - t0
    conn.close()
    del events, event
    gc.collect()
    conn = sqlite3.connect(path)
    t0 = time.perf_counter()
    loaded = [
        Step.model_validate_json(row[0])
        for row in conn.execute("SELECT json FROM steps WHERE run_id = ? ORDER BY idx", (run_id,))
    ]
    read = time.perf_counter() - t0
    conn.close()
    assert len(loaded) == steps
    return Measure(steps, elapsed, read, file_size(path))


def machine() -> str:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d}; {platform.platform()}; "
        f"Python {platform.python_version()}; SQLite {sqlite3.sqlite_version}; nproc {cpus}"
    )


def mib(size: float) -> str:
    return f"{size / 2**20:,.1f} MiB"


def section(rows: list[tuple[Measure, Measure]], long_run: Measure) -> tuple[str, bool]:
    first, last = rows[0][0], rows[-1][0]
    bytes_flat = last.bytes_per_step / first.bytes_per_step
    write_flat = last.write_ms_per_step / first.write_ms_per_step
    read_flat = last.read_ms_per_step / first.read_ms_per_step
    lines = [
        SECTION,
        "",
        "A synthetic tool-calling turn of N steps streamed into the store through its recorder "
        "(every step's request repeats the whole history, normalised and as a raw OpenAI-style "
        "body), then `Store.load` of the exact `RunRecord`. Peer in the same run: the naive "
        "layout (each step's full JSON, request and raw body as they are, same transactions), "
        "read back by validating every row. Size: the SQLite file after a WAL checkpoint. "
        "Write: time inside the recorder, events built beforehand (pending row at "
        "`StepStarted`, events and final row at `StepFinished`). Goal: bytes and write time "
        "per step flat in the turn length "
        f"(longest within {FLATNESS_GOAL:.0f}x of shortest). Reproduce with "
        "`python bench/store.py --write bench/RESULTS.md`.",
        "",
        f"Measured {machine()}.",
        "",
        "| steps | store size | bytes/step | write ms/step | read ms/step "
        "| naive size | naive write ms/step | naive read ms/step | size ratio (store/naive) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for ours, naive in rows:
        lines.append(
            f"| {ours.steps:,} | {mib(ours.size)} | {ours.bytes_per_step:,.0f} "
            f"| {ours.write_ms_per_step:.3f} | {ours.read_ms_per_step:.3f} "
            f"| {mib(naive.size)} | {naive.write_ms_per_step:.3f} "
            f"| {naive.read_ms_per_step:.3f} | {ours.size / naive.size:.4f} |"
        )
    ok_bytes = bytes_flat <= FLATNESS_GOAL
    ok_write = write_flat <= FLATNESS_GOAL
    lines += [
        "",
        f"Flatness ({last.steps:,} steps / {first.steps:,} steps, per step): bytes "
        f"{bytes_flat:.2f}x, write {write_flat:.2f}x, read {read_flat:.2f}x.",
        "",
        f"- {'PASS' if ok_bytes else 'FAIL'}: bytes per step flat ({bytes_flat:.2f}x)",
        f"- {'PASS' if ok_write else 'FAIL'}: write time per step flat ({write_flat:.2f}x)",
        "",
        f"Long run: {long_run.steps:,} steps (requests bounded to the opening message and the "
        f"last {WINDOW}; events built while they are recorded) written in {long_run.write_s:.1f} s "
        f"({long_run.write_ms_per_step:.3f} ms/step), read back in {long_run.read_s:.1f} s "
        f"({long_run.read_ms_per_step:.3f} ms/step); {mib(long_run.size)} "
        f"({long_run.bytes_per_step:,.0f} bytes/step).",
        "",
        "Reading: the naive layout's size and read time per step grow with the turn (every "
        "request is stored whole), the store's stay flat; each loaded request is a view of one "
        "shared message list (schema 4: rowid tables, no half-empty overflow pages).",
    ]
    return "\n".join(lines) + "\n", ok_bytes and ok_write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    lengths = QUICK_LENGTHS if args.quick else LENGTHS
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = []
        for steps in lengths:
            ours = measure_store(folder, steps)
            naive = measure_naive(folder, steps)
            print(
                f"{steps} steps: store {mib(ours.size)}, write {ours.write_ms_per_step:.3f} "
                f"ms/step, read {ours.read_ms_per_step:.3f} ms/step; naive {mib(naive.size)}, "
                f"write {naive.write_ms_per_step:.3f}, read {naive.read_ms_per_step:.3f}",
                file=sys.stderr,
            )
            rows.append((ours, naive))
        long_steps = QUICK_LONG_RUN if args.quick else LONG_RUN
        long_run = measure_store(folder, long_steps, stream=True, window=WINDOW, fresh_raw=False)
        print(f"{long_steps} steps: {long_run}", file=sys.stderr)
    text, ok = section(rows, long_run)
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
