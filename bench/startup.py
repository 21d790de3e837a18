"""The fixed cost of one ``agent-inspector run``: start-up, a turn of one or two model calls, exit.

What is measured: ``python -m inspector run SCENARIO --db FILE`` as a subprocess (this tree's
code, byte-code cached in a folder of the benchmark's own, as in ``bench/process.py``), CPU time
of the whole process tree (the command and its user-code worker: ``RUSAGE_CHILDREN``) and wall
time, medians. Cases: a scripted turn with no tool call and a canned tool (no user code), the
same turn with the tool an ``async def`` from a file (``bench/process.py``'s fixed-cost
scenario: a worker starts and loads the file), one call of that tool, ``--json``, one call of
a tool whose file imports ``httpx`` first (as a user's tools often do),
``demo:retry-feedback`` (a python validator) and ``demo:empty-final``. Peers in the same run: a
bare ``python -c pass`` and ``agent-inspector --help``; with ``--base DIR``, the same cases run
by another tree's code (e.g. ``git archive`` of the branch point), alternated with this one's
run by run, so that drift on a shared machine hits both alike.

Usage: ``python bench/startup.py [--base DIR] [--runs N] [--only WORDS]`` (prints a table; no
goals).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import TOOL_MODULES, machine  # bench/engine.py (same folder)
from process import scenario_text  # bench/process.py (same folder)

REPO = Path(__file__).resolve().parent.parent
CANNED = scenario_text(0).replace('function = "async_tools.py:lookup"', 'result = "found"')
CASES = {  # name: (scenario, extra arguments)
    "no user code (canned tool)": ("canned.toml", []),
    "tool from a file, not called": ("process_0.toml", []),
    "tool from a file, called once": ("process_1.toml", []),
    "tool from a file, called once, --json": ("process_1.toml", ["--json"]),
    "tool from a file importing httpx, called once": ("heavy_1.toml", []),
    "demo:retry-feedback (python validator)": ("demo:retry-feedback", []),
    "demo:empty-final (no user code)": ("demo:empty-final", []),
}


def child_env(pycache: str) -> dict[str, str]:
    dropped = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) ms of one command, its children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another tree to run the same cases with")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    args = parser.parse_args(argv)
    cases = {name: case for name, case in CASES.items() if args.only in name}
    trees = {"this": REPO, **({"base": args.base.resolve()} if args.base else {})}
    with tempfile.TemporaryDirectory(prefix="inspector-startup-") as name:
        folder = Path(name)
        for variant, source in TOOL_MODULES.items():
            (folder / f"{variant}_tools.py").write_text(source, encoding="utf-8")
        (folder / "canned.toml").write_text(CANNED, encoding="utf-8")
        for n in (0, 1):
            (folder / f"process_{n}.toml").write_text(scenario_text(n), encoding="utf-8")
        # A tool file as users write them: it imports an HTTP client first.
        heavy = "import httpx  # noqa: F401\n\n" + TOOL_MODULES["async"]
        (folder / "heavy_tools.py").write_text(heavy, encoding="utf-8")
        heavy_scenario = scenario_text(1).replace("async_tools.py", "heavy_tools.py")
        (folder / "heavy_1.toml").write_text(heavy_scenario, encoding="utf-8")
        envs = {tree: child_env(str(folder / f"pycache-{tree}")) for tree in trees}
        jobs: dict[tuple[str, str], list[str]] = {}
        for tree in trees:
            jobs[(tree, "python -c pass")] = [sys.executable, "-c", "pass"]
            jobs[(tree, "--help")] = [sys.executable, "-m", "inspector", "--help"]
            for case, (scenario, extra) in cases.items():
                path = scenario if scenario.startswith("demo:") else str(folder / scenario)
                db = str(folder / f"runs-{tree}.sqlite3")  # one store per tree, as a user has
                jobs[(tree, case)] = [sys.executable, "-m", "inspector", "run", path, "--db", db]
                jobs[(tree, case)] += extra
        for (tree, _), command in jobs.items():  # compile the byte-code, create the stores
            timed(command, trees[tree], envs[tree])
        load = os.getloadavg()[0]
        times: dict[tuple[str, str], list[tuple[float, float]]] = {job: [] for job in jobs}
        for _ in range(args.runs):
            for case in ["python -c pass", "--help", *cases]:
                for tree in trees:  # alternated: this, base, this, base...
                    times[(tree, case)].append(timed(jobs[(tree, case)], trees[tree], envs[tree]))
        load_after = os.getloadavg()[0]
    print(f"Measured {machine()}; {args.runs} runs each; load {load:.1f} → {load_after:.1f}")
    print()
    heads = " | ".join(f"{tree}: CPU ms | {tree}: wall ms" for tree in trees)
    print(f"| case | {heads} |")
    print("|---|" + "---:|" * (2 * len(trees)))
    for case in ["python -c pass", "--help", *cases]:
        cells = []
        for tree in trees:
            wall, cpu = zip(*times[(tree, case)], strict=True)
            cells += [f"{statistics.median(cpu):.0f}", f"{statistics.median(wall):.0f}"]
        print(f"| {case} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
