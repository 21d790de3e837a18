"""Reading and reporting long stored runs: load, JSONL and HTML export, compare, store size.

What is measured: runs recorded by the engine into a store (scripted turns of N ``lookup`` tool
calls and a final answer; every request re-sends the whole history, which grows with the turn),
at N = 1,000 and 10,000; for ``compare`` two runs of each length that part ways at step 1 (another
system prompt). Each operation runs as a subprocess, the way a user meets it: ``Store.load`` of
the run (time inside the process and its peak memory), ``agent-inspector export --format jsonl``,
``--format html`` and ``--format otel``, ``agent-inspector compare A B``. Times are the child's
CPU time (user + system; steadier than wall time on a shared machine), medians.

Peer, in the same run: a script reading the same rows with raw SQLite (``runs``, ``steps``,
``verdicts``, ``events`` and the ``messages``/``frames`` they reference) and ``json.loads`` of every
JSON column — the floor of any reader of the store — and, for the exports, writing them out
again with ``json.dumps``. For the store's size: the same tables copied into plain rowid tables
without indexes (``CREATE TABLE ... AS SELECT``), both files vacuumed.

Goals: a 10,000-step load < 1 s and < 300 MB, per step within 1.5x of the 1,000-step figure;
JSONL export of 10,000 steps < 3 s; JSONL, HTML and OTel export of 1,000 steps < 3 s and compare
of two 1,000-step runs < 2 s, each 10,000-step figure within 12x of the 1,000-step one; the
store's size within 1.2x of the rowid copy.

Usage: ``python bench/reports.py [--write bench/RESULTS.md] [--quick]`` (``--quick``: 300 and
3,000 steps, one run each; verdicts indicative).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine import machine  # bench/engine.py (same folder)
from results import write_section  # bench/results.py

from inspector.core.events import fan_out
from inspector.core.loop import Turn
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider
from inspector.store import Store

SECTION = "## Reports over long runs: load, export, compare (bench/reports.py)"
LENGTHS = (1000, 10_000)
QUICK_LENGTHS = (300, 3000)
RUNS, QUICK_RUNS = 3, 1
CLI = Path(sys.executable).with_name("agent-inspector")
RESULT = "Result: the knowledge base says something relevant about this query."

# Peak resident memory of this process in MB. Not ru_maxrss: it keeps the high-water mark of
# the forked parent across exec.
PEAK = """
def PEAK():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")
"""

LOAD = (
    PEAK
    + """
import json, sys, time
from inspector.store import Store
with Store.open(sys.argv[1]) as store:
    start = time.process_time()
    record = store.load(sys.argv[2])
    spent = time.process_time() - start
assert len(record.steps) == int(sys.argv[3])
print(json.dumps({"s": spent, "mb": PEAK()}))
"""
)

# The floor of any reader: the run's rows and the JSON they reference, parsed; with an output
# file, written out again as JSON lines.
PEER = (
    PEAK
    + """
import json, sqlite3, sys, time
start = time.process_time()
conn = sqlite3.connect(sys.argv[1])
out = open(sys.argv[3], "w") if len(sys.argv) > 3 else None
for run_id in sys.argv[2].split(","):
    rows = []
    for table in ("runs", "steps", "verdicts", "events"):
        rows += conn.execute(f"SELECT * FROM {table} WHERE run_id = ?", (run_id,)).fetchall()
    rows += conn.execute(
        "SELECT body FROM messages WHERE hash IN (SELECT j.value FROM steps s,"
        " json_each(s.msg_added) j WHERE s.run_id = ?)", (run_id,)).fetchall()
    rows += conn.execute(
        "SELECT body FROM frames WHERE hash IN (SELECT frame FROM steps WHERE run_id = ?)",
        (run_id,)).fetchall()
    for row in rows:
        values = [json.loads(v) for v in row if isinstance(v, str) and v[:1] in "[{"]
        if out is not None:
            out.write(json.dumps(values) + "\\n")
spent = time.process_time() - start
print(json.dumps({"s": spent, "mb": PEAK()}))
"""
)


def scenario(n: int, system: str) -> dict[str, object]:
    call = {"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}
    return {
        "name": f"reports-{n}",
        "model": {"provider": "scripted", "name": "bench", "stream": False},
        "prompt": {"system": system, "user": "Look it up."},
        "tools": [{"name": "lookup", "description": "Look it up", "result": RESULT}],
        "policy": {"max_steps": n + 1, "final_step": "none"},
        "script": [call] * n + [{"text": "done"}],
    }


async def record(db: Path, n: int, system: str) -> str:
    source = scenario_from_dict(scenario(n, system), source="bench.toml", base_dir=db.parent)
    with Store.open(db) as store:
        turn = Turn(source, ScriptedProvider(source.script), fan_out(store.recorder()))
        return (await turn.run()).run_id


# Byte-code as an installed app has it: children compile the tree once into a cache of their
# own, also where the environment says not to write byte-code (PYTHONDONTWRITEBYTECODE made
# every export and compare compile every module again: ~0.4-0.8 s of each figure).
PYCACHE = tempfile.TemporaryDirectory(prefix="inspector-bench-pycache-")
CHILD_ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": PYCACHE.name,
}


def cpu_of(argv: list[str]) -> tuple[float, str]:
    """The child's CPU seconds and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=CHILD_ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} failed: {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def inner(argv: list[str]) -> dict[str, float]:
    """A script that times itself: its JSON line."""
    result: dict[str, float] = json.loads(cpu_of(argv)[1].splitlines()[-1])
    return result


@dataclass
class Length:
    steps: int
    times: dict[str, list[float]] = field(default_factory=dict)  # what -> CPU seconds per run
    memory: dict[str, float] = field(default_factory=dict)  # what -> peak MB
    sizes: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, seconds: float) -> None:
        self.times.setdefault(what, []).append(seconds)

    def s(self, what: str) -> float:
        return statistics.median(self.times[what])


def store_sizes(db: Path, folder: Path) -> tuple[int, int]:
    """(the store vacuumed, its tables copied into plain rowid tables and vacuumed)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.close()
    copy = folder / f"{db.stem}-rowid-copy.sqlite3"
    conn = sqlite3.connect(copy)
    conn.execute("ATTACH DATABASE ? AS src", (str(db),))
    for table in ("runs", "steps", "messages", "frames", "verdicts", "events"):
        conn.execute(f"CREATE TABLE {table} AS SELECT * FROM src.{table}")
    conn.commit()
    conn.execute("DETACH DATABASE src")
    conn.execute("VACUUM")
    conn.close()
    return db.stat().st_size, copy.stat().st_size


def measure_length(n: int, runs: int, folder: Path) -> Length:
    db = folder / f"reports-{n}.sqlite3"
    first = asyncio.run(record(db, n, "You are a research agent."))
    second = asyncio.run(record(db, n, "You are another research agent."))
    out = Length(n)
    python, base = sys.executable, ["--db", str(db)]
    for _ in range(runs):
        loaded = inner([python, "-c", LOAD, str(db), first, str(n + 1)])
        out.add("load", loaded["s"])
        out.memory["load"] = loaded["mb"]
        peer = inner([python, "-c", PEER, str(db), first])
        out.add("peer read", peer["s"])
        out.memory["peer read"] = peer["mb"]
        out.add("peer read+write", inner([python, "-c", PEER, str(db), first, "/dev/null"])["s"])
        out.add("peer read 2 runs", inner([python, "-c", PEER, str(db), f"{first},{second}"])["s"])
        for fmt in ("jsonl", "html", "otel"):
            target = folder / f"export-{n}.{fmt}"
            argv = [str(CLI), "export", first, "--format", fmt, "--out", str(target), *base]
            out.add(f"export {fmt}", cpu_of(argv)[0])
            out.sizes[fmt] = target.stat().st_size
        out.add("compare", cpu_of([str(CLI), "compare", first, second, *base])[0])
    out.sizes["store"], out.sizes["rowid copy"] = store_sizes(db, folder)
    print(f"{n} steps: {out.times}", file=sys.stderr)
    return out


ROWS = (
    ("load", "`Store.load` (in-process)", "peer read"),
    ("export jsonl", "`export --format jsonl` (process)", "peer read+write"),
    ("export html", "`export --format html` (process)", "peer read+write"),
    ("export otel", "`export --format otel` (process)", "peer read+write"),
    ("compare", "`compare A B` (process)", "peer read 2 runs"),
)


def section(lengths: list[Length]) -> tuple[str, bool]:
    small, big = lengths[0], lengths[-1]
    lines = [
        SECTION,
        "",
        "Runs recorded by the engine into a store: scripted turns of N `lookup` tool calls and a "
        "final answer, every request re-sending the whole history (it grows with the turn); for "
        "compare, two runs of N steps that part ways at step 1 (another system prompt). Each "
        "operation runs as a subprocess; times are its CPU time (user + system), medians. Peer, "
        "same run: raw SQLite read of the same rows and the messages/frames they reference, "
        "`json.loads` of every JSON column (and `json.dumps` of them again for the exports). "
        "Reproduce with `python bench/reports.py --write bench/RESULTS.md`.",
        "",
        f"Measured {machine()}.",
        "",
        "| what | "
        + " | ".join(f"{x.steps:,} steps | peer | ratio" for x in lengths)
        + f" | growth ({big.steps:,} / {small.steps:,}, per step) |",
        "|---|" + "---:|---:|---:|" * len(lengths) + "---:|",
    ]
    for what, label, peer in ROWS:
        cells = [
            f"{x.s(what):.2f} s | {x.s(peer):.2f} s | {x.s(what) / x.s(peer):.1f}x" for x in lengths
        ]
        growth = (big.s(what) / big.steps) / (small.s(what) / small.steps)
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {growth:.2f}x |")
    lines += [
        "",
        "| steps | load peak memory (peer) | JSONL file | HTML file | OTel file | store "
        "| rowid copy | store / copy |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for x in lengths:
        lines.append(
            f"| {x.steps:,} | {x.memory['load']:.0f} MB ({x.memory['peer read']:.0f} MB) "
            f"| {x.sizes['jsonl'] / 1e6:.1f} MB | {x.sizes['html'] / 1e6:.1f} MB "
            f"| {x.sizes['otel'] / 1e6:.1f} MB "
            f"| {x.sizes['store'] / 1e6:.1f} MB | {x.sizes['rowid copy'] / 1e6:.1f} MB "
            f"| {x.sizes['store'] / x.sizes['rowid copy']:.2f}x |"
        )

    def per_step(what: str) -> float:
        return (big.s(what) / big.steps) / (small.s(what) / small.steps)

    goals = [
        (f"load {big.steps:,} < 1 s ({big.s('load'):.2f} s)", big.s("load") < 1.0),
        (f"load {big.steps:,} < 300 MB ({big.memory['load']:.0f} MB)", big.memory["load"] < 300),
        (
            f"load per step {big.steps:,} ≤ 1.5x {small.steps:,} ({per_step('load'):.2f}x)",
            per_step("load") <= 1.5,
        ),
        (
            f"JSONL export {big.steps:,} < 3 s ({big.s('export jsonl'):.2f} s)",
            big.s("export jsonl") < 3.0,
        ),
    ]
    for what, limit in (
        ("export jsonl", 3.0),
        ("export html", 3.0),
        ("export otel", 3.0),
        ("compare", 2.0),
    ):
        goals.append(
            (f"{what} {small.steps:,} < {limit:g} s ({small.s(what):.2f} s)", small.s(what) < limit)
        )
        growth = big.s(what) / small.s(what)
        goals.append((f"{what} {big.steps:,} ≤ 12x {small.steps:,} ({growth:.1f}x)", growth <= 12))
    ratio = big.sizes["store"] / big.sizes["rowid copy"]
    goals.append((f"store ≤ 1.2x its rowid copy ({ratio:.2f}x)", ratio <= 1.2))
    lines += ["", *(f"- {'PASS' if ok else 'FAIL'}: {text}" for text, ok in goals), ""]
    return "\n".join(lines), all(ok for _, ok in goals)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the table here")
    parser.add_argument("--quick", action="store_true", help="smoke test: 300 and 3,000 steps")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="inspector-reports-") as name:
        lengths = [
            measure_length(n, QUICK_RUNS if args.quick else RUNS, Path(name))
            for n in (QUICK_LENGTHS if args.quick else LENGTHS)
        ]
    text, passed = section(lengths)
    print(text)
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    if args.write:
        write_section(args.write, SECTION, text)
        print(f"wrote {args.write}", file=sys.stderr)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
