"""The Model saw tab's marks and diff over long turns (issue 14).

What is measured: turns recorded by the engine into a store and loaded back (as the window
shows a stored run): N ``lookup`` tool calls, then an answer a validator rejects, then an
accepted one (N + 2 steps; every request re-sends the whole history). At N = 100, 1,000 and
10,000, medians of many calls, in this process:

- ``request_marks`` of the last step (attempt 2: the kept answer and the feedback of attempt 1
  are badged, two messages are NEW) and of a work step in the middle of the turn;
- ``request_diff`` of the last step against the previous call (here also the previous
  attempt's request).

Peer, in the same run: the compare view's line diff of the same two requests
(``compare_lines.diff_requests``, every message's lines), at 100 and 1,000 steps only (it
grows with the history: 1.5 s at 1,000 steps, one call there).

Goal: flat — each 10,000-step figure within 1.5x of the 100-step one; the diff well under 1 ms.

Usage: ``python bench/model_saw.py [--write bench/RESULTS.md] [--quick]`` (``--quick``: 100 and
1,000 steps).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine import machine  # bench/engine.py (same folder)
from results import write_section  # bench/results.py

from inspector.core.events import fan_out
from inspector.core.loop import Turn
from inspector.core.records import RunRecord
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider
from inspector.reports.compare_lines import diff_requests
from inspector.reports.request_diff import request_diff
from inspector.reports.request_marks import request_marks
from inspector.store import Store

SECTION = "## Model saw: marks and diff over long turns (bench/model_saw.py)"
LENGTHS = (100, 1000, 10_000)
QUICK_LENGTHS = (100, 1000)
PEER_UP_TO = 1000
GOAL = 1.5


def scenario(n: int) -> dict[str, object]:
    call = {"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}
    return {
        "name": f"model-saw-{n}",
        "model": {"provider": "scripted", "name": "bench", "stream": False},
        "prompt": {"system": "You look things up.", "user": "Look it up."},
        "tools": [{"name": "lookup", "description": "Look it up", "result": "Found it."}],
        "validators": [{"kind": "regex_absent", "pattern": "[*]", "feedback": "Plain text."}],
        "policy": {"max_steps": n + 3, "final_step": "none", "max_attempts": 2},
        "script": [call] * n + [{"text": "**done**"}, {"text": "done"}],
    }


async def recorded(db: Path, n: int) -> RunRecord:
    source = scenario_from_dict(scenario(n), source="bench.toml", base_dir=db.parent)
    with Store.open(db) as store:
        turn = Turn(source, ScriptedProvider(source.script), fan_out(store.recorder()))
        run_id = (await turn.run()).run_id
        return store.load(run_id)


def median_us(call: Callable[[], object], budget_s: float = 0.3, least: int = 5) -> float:
    """Median microseconds of one call, over as many calls as ``budget_s`` holds (≥ ``least``)."""
    times: list[float] = []
    spent = 0.0
    while len(times) < least or (spent < budget_s and len(times) < 2000):
        start = time.perf_counter()
        call()
        took = time.perf_counter() - start
        times.append(took)
        spent += took
    return statistics.median(times) * 1e6


def measure(lengths: tuple[int, ...]) -> list[dict[str, object]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-model-saw-") as tmp:
        for n in lengths:
            rows.append(timed(n, asyncio.run(recorded(Path(tmp) / f"{n}.sqlite3", n))))
            print(rows[-1], flush=True)
    return rows


def timed(n: int, record: RunRecord) -> dict[str, object]:
    steps, policy = record.steps, record.policy
    last = steps[-1]
    assert last.attempt == 2 and len(steps) == n + 2
    marks = request_marks(steps, last.index, policy)
    assert marks.new_count(len(last.request.messages)) == 2 and len(marks.badges) == 2
    before = steps[-2].request
    diff = request_diff(before, last.request)
    assert diff.added == 5 and diff.skipped == len(before.messages)
    peer = None
    if n <= PEER_UP_TO:  # 1.5 s a call at 1,000 steps: one call there
        peer = median_us(lambda: diff_requests([before, last.request]), least=1 + 4 * (n < 1000))
    return {
        "n": n,
        "messages": len(last.request.messages),
        "marks_last": median_us(lambda: request_marks(steps, last.index, policy)),
        "marks_middle": median_us(lambda: request_marks(steps, n // 2, policy)),
        "diff": median_us(lambda: request_diff(before, last.request)),
        "peer": peer,
    }


def section(rows: list[dict[str, object]]) -> str:
    load = os.getloadavg()
    lines = [
        SECTION,
        "",
        f"Measured {machine()}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        "(the machine is shared).",
        "",
        "A turn of N `lookup` tool calls, a rejected answer, then an accepted one (N + 2 "
        "steps), recorded by the engine into a store and loaded back. Medians in µs of "
        "`request_marks` (the last step: attempt 2, its kept answer and feedback badged, 2 "
        "messages NEW; a work step in the middle) and `request_diff` (the last step against "
        "the previous call). Peer in the same run: the compare view's line diff of the same "
        "two requests (`compare_lines.diff_requests`, every message), up to 1,000 steps. "
        "Reproduce with `python bench/model_saw.py --write bench/RESULTS.md`.",
        "",
        "| steps | messages sent | marks, last step | marks, middle step | diff with the "
        "previous call | peer: full line diff |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        peer = row["peer"]
        lines.append(
            f"| {row['n']:,} | {row['messages']:,} | {row['marks_last']:.1f} | "
            f"{row['marks_middle']:.1f} | {row['diff']:.1f} | "
            + (f"{peer:,.0f}" if isinstance(peer, float) else "—")
            + " |"
        )
    first, last = rows[0], rows[-1]
    lines.append("")
    for key, what in (
        ("marks_last", "marks, last step"),
        ("marks_middle", "marks, middle step"),
        ("diff", "diff"),
    ):
        ratio = float(last[key]) / float(first[key])  # type: ignore[arg-type]
        verdict = "PASS" if ratio <= GOAL else "FAIL"
        lines.append(
            f"- {verdict}: {what} flat: {last['n']:,} steps {ratio:.2f}x of {first['n']:,} "
            f"(goal ≤ {GOAL}x)"
        )
    slowest = max(float(r["diff"]) for r in rows)  # type: ignore[arg-type]
    verdict = "PASS" if slowest < 1000 else "FAIL"
    lines.append(f"- {verdict}: the diff under 1 ms at every length (slowest {slowest:.0f} µs)")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="update this RESULTS.md section")
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 steps only")
    args = parser.parse_args()
    rows = measure(QUICK_LENGTHS if args.quick else LENGTHS)
    text = section(rows)
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
