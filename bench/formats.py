"""Open formats: OpenTelemetry export and import speed, each beside a peer measured in the same
run.

What is measured, on recorded turns of N steps (N - 1 tool calls, then the answer, on the
scripted model; every request re-sends the growing history, as a real turn does):

1. **Export as OTLP/JSON** (``run_to_otlp`` + ``json.dumps``, what ``export --format otel``
   writes) beside **the JSONL export** of the same record (``jsonl_lines`` over the events
   rebuilt from it, what ``export --format jsonl`` writes for an imported run).
2. **Import of that OTLP/JSON** (``import_file``: parse, decode every span, rebuild the record)
   beside **reading the record's own JSON** (``RunRecord.model_validate_json``: the floor any
   import has to pay to end with a record).

Goal: a 100-step run exports and imports in under 1 s each (1,000 steps: informational; a chat
span carries at most 100 input messages, docs/formats.md, so past 100 messages the file grows
with the steps). Usage:
``python bench/formats.py [--write bench/RESULTS.md] [--quick]``; without ``--quick`` the exit
status is 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from results import cpu_model, write_section  # bench/results.py (this folder is on sys.path)

from inspector.core.loop import run_turn
from inspector.core.records import RunRecord
from inspector.core.scenario import scenario_from_dict
from inspector.formats.importing import import_file
from inspector.formats.otel_export import run_to_otlp
from inspector.providers.factory import build_provider
from inspector.reports.jsonl import jsonl_lines
from inspector.reports.synthetic_events import events_from_record

SECTION = "## Open formats (bench/formats.py)"
SIZES = (10, 100, 1000)
GOAL_S = 1.0
GOAL_STEPS = 100


async def recorded_turn(steps: int) -> RunRecord:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "lookup", "arguments": {"q": f"fact {i}"}}]}
        for i in range(steps - 1)
    ]
    script.append({"text": "Here is what I found."})
    data = {
        "name": "bench-formats",
        "prompt": {"system": "You research.", "user": "Find the facts."},
        "tools": [{"name": "lookup", "result": "a fact", "parameters": {"type": "object"}}],
        "validators": [{"kind": "non_empty"}],
        "policy": {"max_steps": steps + 5},
        "script": script,
    }
    scenario = scenario_from_dict(data, source="bench", base_dir=Path("."))
    record = await run_turn(scenario, build_provider(scenario))
    assert len(record.steps) == steps and record.status == "succeeded"
    return record


def timed(work: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        work()
        samples.append(time.perf_counter() - t0)
    return samples


def bench(record: RunRecord, folder: Path, repeats: int) -> dict[str, float]:
    """Median ms of each of the four, interleaved so drift on the machine hits all alike."""
    path = folder / "run.otlp.json"
    path.write_text(json.dumps(run_to_otlp(record)))
    record_json = record.model_dump_json()
    ids = iter(range(10**9))
    work: dict[str, Callable[[], object]] = {
        "otel export": lambda: json.dumps(run_to_otlp(record)),
        "jsonl export": lambda: "\n".join(jsonl_lines(record, events_from_record(record))),
        "otel import": lambda: import_file(path, "otel", lambda: f"r{next(ids)}"),
        "record JSON read": lambda: RunRecord.model_validate_json(record_json),
    }
    samples: dict[str, list[float]] = {k: [] for k in work}
    for _ in range(repeats):
        for name, job in work.items():
            samples[name] += timed(job, 1)
    out = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    out["file MB"] = path.stat().st_size / 1e6
    return out


def section(results: dict[int, dict[str, float]], repeats: dict[int, int]) -> tuple[str, bool]:
    cpus = os.cpu_count()
    lines = [
        SECTION,
        "",
        f"Measured {dt.date.today().isoformat()}; {platform.platform()}; "
        f"Python {platform.python_version()}; CPU {cpu_model()}, nproc {cpus}; "
        f"pydantic {version('pydantic')}. Medians; the four interleaved in one process. "
        "Reproduce with `python bench/formats.py --write bench/RESULTS.md`.",
        "",
        "A recorded turn of N steps (N - 1 tool calls, then the answer; each request re-sends "
        "the history). Peers: the JSONL export of the same record, and reading the record's "
        f"own JSON (the floor of any import). Goal: {GOAL_STEPS} steps under {GOAL_S:.0f} s each "
        "way.",
        "",
        "| steps | runs | otel export (ms) | jsonl export (ms) | otel import (ms) "
        "| record JSON read (ms) | OTLP/JSON file (MB) | goal |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    passed = True
    for steps, r in results.items():
        met = "-"
        if steps == GOAL_STEPS:
            ok = max(r["otel export"], r["otel import"]) < GOAL_S * 1000
            passed = passed and ok
            met = "met" if ok else "missed"
        lines.append(
            f"| {steps:,} | {repeats[steps]} | {r['otel export']:.1f} | {r['jsonl export']:.1f} "
            f"| {r['otel import']:.1f} | {r['record JSON read']:.1f} | {r['file MB']:.2f} | {met} |"
        )
    lines += [
        "",
        "The JSONL export writes a request as its difference from the one it continues; the "
        "OTLP/JSON file's chat spans carry at most the last 100 input messages each "
        "(`gen_ai.input.messages`; the first ones are the previous span's, docs/formats.md), so "
        "both grow with the steps once a request passes 100 messages. The otel export "
        "serialises each distinct message once and joins the pieces; the import parses every "
        "span's message JSON but builds a record "
        "message only where a request differs from the one before, so at 1,000 steps it beats "
        "the floor, which builds every message of every step anew. The machine is shared (load "
        "average about 8 on 2 cores during this run): compare within a row, not across runs.",
    ]
    return "\n".join(lines) + "\n", passed


async def run(quick: bool) -> tuple[str, bool]:
    results: dict[int, dict[str, float]] = {}
    repeats: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for steps in SIZES:
            record = await recorded_turn(steps)
            repeats[steps] = 2 if quick else (20 if steps <= 100 else 3)
            results[steps] = bench(record, Path(tmp), repeats[steps])
    return section(results, repeats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the table here")
    parser.add_argument("--quick", action="store_true", help="smoke test: few repeats")
    args = parser.parse_args(argv)
    text, passed = asyncio.run(run(args.quick))
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
        print(f"wrote {args.write}", file=sys.stderr)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
