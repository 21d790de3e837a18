"""The whole ``agent-inspector run`` process, recording on, as a user meets it.

What is measured: ``agent-inspector run SCENARIO --db FILE`` as a subprocess, for a scripted turn
of N tool calls and a final answer (N + 1 model calls) at N = 10, 100, 1,000 and 10,000, each
into a fresh store: start-up, the turn, recording every event, reading the run back and printing
its timeline, and the process exit. The tool is ``async def lookup`` loaded from a file next to
the scenario (as in ``bench/engine.py``). The fixed cost is the same command for a turn of no
tool call (one model call); the marginal per-step cost is (T(N) - T(0)) / N.

Peer, in the same run: pydantic-ai (``Agent`` + ``FunctionModel``, the same tool file) running the
same turn in-process (``bench/engine.py``'s turn; no process start, no recording), at 10, 100 and
1,000 steps — at 10,000 one pydantic-ai turn would take most of an hour (its per-step cost grows
with the history), so that length has no peer.

Also ``agent-inspector --help`` against a bare ``python -c pass``.

Goals: marginal per-step cost at 1,000 steps ≤ 1.5x the 100-step figure (and 10,000 within 1.5x
of 1,000), ≤ 0.1x pydantic-ai's per-step time at 100 and 1,000 steps; ``--help`` < 0.15 s.

The command runs as ``python -m inspector`` from this repository (the installed
``agent-inspector`` script may import another checkout), with byte-code cached in a folder of
the benchmark's own, also where ``PYTHONDONTWRITEBYTECODE`` is set.

Usage: ``python bench/process.py [--write bench/RESULTS.md] [--quick]`` (``--quick``: 10, 100
and 1,000 steps, fewer runs; goal verdicts indicative).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine import machine, pydantic_ai_turn, tool_dir  # bench/engine.py (same folder)
from results import write_section  # bench/results.py

SECTION = "## Whole process: agent-inspector run (bench/process.py)"
LENGTHS = (10, 100, 1000, 10_000)
QUICK_LENGTHS = (10, 100, 1000)
RUNS = {0: 15, 10: 9, 100: 15, 1000: 5, 10_000: 2}
QUICK_RUNS = {0: 3, 10: 3, 100: 3, 1000: 1}
PEER_RUNS = {10: 10, 100: 3, 1000: 1}
GROWTH_GOAL = 1.5
RATIO_GOAL = 0.1
HELP_GOAL_S = 0.15
# The CLI of THIS tree: ``python -m inspector`` run from the repository (the installed
# ``agent-inspector`` script may import another checkout's code).
REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "inspector"]
# Byte-code as an installed app has it: the children compile this tree once (the warm-up run)
# into a cache of their own, also where the environment says not to write byte-code
# (PYTHONDONTWRITEBYTECODE would make every process compile every module again, ~0.4 s).
PYCACHE = tempfile.TemporaryDirectory(prefix="inspector-bench-pycache-")
CHILD_ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": PYCACHE.name,
}


def scenario_text(n: int) -> str:
    lines = [
        f'name = "process-{n}"',
        '[model]\nprovider = "scripted"\nname = "bench"\nstream = false',
        '[prompt]\nsystem = "You are a bench."\nuser = "go"',
        '[[tools]]\nname = "lookup"\ndescription = "Look it up"',
        'function = "async_tools.py:lookup"',
        'parameters = { type = "object", properties = { q = { type = "string" } } }',
        f'[policy]\nmax_steps = {n + 1}\nfinal_step = "none"',
    ]
    call = '[[script]]\ntool_calls = [{ name = "lookup", arguments = { q = "x" } }]'
    lines += [call] * n
    lines.append('[[script]]\ntext = "done"')
    return "\n".join(lines) + "\n"


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of the child process: CPU time is what the process itself cost,
    steadier than wall time on a machine shared with other work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
        cwd=REPO,
        env=CHILD_ENV,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def run_process(folder: Path, n: int, attempt: int) -> tuple[float, float]:
    scenario = folder / f"process_{n}.toml"
    if not scenario.exists():
        scenario.write_text(scenario_text(n), encoding="utf-8")
    db = folder / f"runs-{n}-{attempt}.sqlite3"
    return timed([*CLI, "run", str(scenario), "--db", str(db)])


@dataclass
class Row:
    steps: int
    wall: list[float]
    cpu: list[float]
    peer_ms: list[float]  # pydantic-ai CPU ms per model call, one per run

    @property
    def wall_s(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_s(self) -> float:
        return statistics.median(self.cpu)


def peer(n: int, runs: int, folder: Path) -> list[float]:
    async def go() -> list[float]:
        turn = pydantic_ai_turn(n, "async", folder)
        await pydantic_ai_turn(3, "async", folder)()
        out = []
        for _ in range(runs):
            start = time.process_time()
            await turn()
            out.append((time.process_time() - start) / (n + 1) * 1e3)
        return out

    return asyncio.run(go())


def measure(lengths: tuple[int, ...], quick: bool, folder: Path) -> tuple[Row, list[Row]]:
    runs = QUICK_RUNS if quick else RUNS
    run_process(folder, 3, 99)  # warm the file cache and byte-code
    lengths = (0, *lengths)
    times: dict[int, list[tuple[float, float]]] = {n: [] for n in lengths}
    # Round robin over the lengths: a marginal cost is a difference of two medians, so drift on
    # a shared machine must hit the fixed cost and each length alike.
    for i in range(max(runs[n] for n in lengths)):
        for n in lengths:
            if i < runs[n]:
                times[n].append(run_process(folder, n, i))
    rows = []
    for n in lengths:
        wall, cpu = zip(*times[n], strict=True)
        peer_runs = PEER_RUNS.get(n, 0) if not quick or n <= 100 else 0
        rows.append(Row(n, list(wall), list(cpu), peer(n, peer_runs, folder) if peer_runs else []))
        print(f"{n} steps: {statistics.median(wall):.3f} s", file=sys.stderr)
    return rows[0], rows[1:]


def help_times() -> tuple[float, float]:
    timed([*CLI, "--help"])  # compiles what --help imports
    bare = statistics.median(timed([sys.executable, "-c", "pass"])[0] for _ in range(9))
    cli = statistics.median(timed([*CLI, "--help"])[0] for _ in range(9))
    return cli, bare


def marginal_ms(row: Row, fixed: Row) -> float:
    return (row.cpu_s - fixed.cpu_s) / row.steps * 1e3


def section(fixed: Row, rows: list[Row], help_s: tuple[float, float]) -> tuple[str, bool]:
    lines = [
        SECTION,
        "",
        "`agent-inspector run SCENARIO --db FILE` as a subprocess (`python -m inspector` from "
        "this repository, byte-code cached as an installed app has it), recording on, each run "
        "into a fresh store: a scripted turn of N `lookup` tool calls (`async def`, loaded from "
        "a file next to the scenario) and a final answer. The process starts, runs and records "
        "the turn and prints its timeline live (without `--json` the run is not read back). "
        "Times are the "
        "child's CPU time (user + system, its user-code worker included; steadier than wall time "
        "on a shared machine), medians; wall time shown too. Fixed cost: the same command for a "
        "turn with no tool call. Marginal "
        "ms/step = (CPU time - fixed) / N. Peer, same run: pydantic-ai running the same turn "
        "in-process (no process start, no recording; `bench/engine.py`'s turn), CPU ms per "
        "model call. Reproduce with `python bench/process.py --write bench/RESULTS.md`.",
        "",
        f"Measured {machine()}. Fixed cost (a turn without tool calls): {fixed.cpu_s * 1e3:.0f} "
        f"ms CPU, {fixed.wall_s * 1e3:.0f} ms wall.",
        "",
        "| steps | process CPU | wall | CPU ms/step (whole) | marginal ms/step | growth vs "
        "previous | pydantic-ai ms/step | ratio (marginal / pydantic-ai) | runs |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    goals: list[tuple[str, bool]] = []
    previous: Row | None = None
    for row in rows:
        marginal = marginal_ms(row, fixed)
        growth = marginal / marginal_ms(previous, fixed) if previous else None
        peer_ms = statistics.median(row.peer_ms) if row.peer_ms else None
        ratio = marginal / peer_ms if peer_ms else None
        lines.append(
            f"| {row.steps:,} | {row.cpu_s:.2f} s | {row.wall_s:.2f} s "
            f"| {row.cpu_s / (row.steps + 1) * 1e3:.2f} | {marginal:.3f} "
            f"| {f'{growth:.2f}x' if growth else '-'} "
            f"| {f'{peer_ms:.2f}' if peer_ms else '-'} | {f'{ratio:.3f}' if ratio else '-'} "
            f"| {len(row.cpu)}, {len(row.peer_ms)} |"
        )
        if previous is not None and growth is not None and row.steps >= 1000:
            text = f"marginal per step, {row.steps:,} ≤ {GROWTH_GOAL}x {previous.steps:,}"
            goals.append((f"{text} ({growth:.2f}x)", growth <= GROWTH_GOAL))
        if ratio is not None and row.steps >= 100:
            text = f"≤ {RATIO_GOAL}x pydantic-ai per step at {row.steps:,}"
            goals.append((f"{text} ({ratio:.3f}x)", ratio <= RATIO_GOAL))
        previous = row
    cli, bare = help_s
    goals.append((f"`agent-inspector --help` < {HELP_GOAL_S} s ({cli:.3f} s)", cli < HELP_GOAL_S))
    lines += [
        "",
        f"`agent-inspector --help`: {cli * 1e3:.0f} ms (median of 9); a bare `python -c pass`: "
        f"{bare * 1e3:.0f} ms.",
        "",
        *(f"- {'PASS' if ok else 'FAIL'}: {text}" for text, ok in goals),
        "",
    ]
    return "\n".join(lines), all(ok for _, ok in goals)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the table here")
    parser.add_argument("--quick", action="store_true", help="smoke test: up to 1,000 steps")
    args = parser.parse_args(argv)
    with tool_dir() as folder:  # the tool file, the scenarios and the stores
        fixed, rows = measure(QUICK_LENGTHS if args.quick else LENGTHS, args.quick, folder)
    text, passed = section(fixed, rows, help_times())
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
        print(f"wrote {args.write}", file=sys.stderr)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
