"""What running user code in a worker process costs, each beside a peer measured in the same run.

What is measured:

1. **One python validator call over a warm worker**: ``Validator.judge`` of a small python
   validator (the request pickled to the worker, the file's mtime checked there, the call, the
   reply pickled back, the verdict built), one call at a time, each timed. Peers: the same
   function called directly in this process (the floor: no isolation at all), and the same call
   on a reused daemon thread (``inspector.core.threads.in_daemon_thread``, how user code ran
   before the worker). Goal: median ≤ 1 ms.
2. **Re-validating 10,000 recorded outputs with a python validator** (built-ins + one python
   validator, as ``agent-inspector revalidate`` does it minus process start: compiling the
   validators, which checks the python file in a worker, then ``revalidate``, which sends the
   python validator's calls in batches of ``pool.BATCH``). Peer: the built-ins alone over the
   same outputs. Goal: < 5 s.
3. **A fresh worker**: killing one (as after a timeout) and serving the next call with a new
   one — what a hung or crashed validator costs the call after it (informational).

Usage: ``python bench/usercode.py [--write bench/RESULTS.md] [--quick]``. Without ``--quick``
the exit status is 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from replay import BUILTINS, machine, record_drafts  # bench/replay.py (this folder is on sys.path)
from results import write_section

from inspector.core.recording import scenario_of
from inspector.core.revalidate import ValidatorSet, revalidate
from inspector.core.scenario import scenario_from_dict
from inspector.core.threads import in_daemon_thread
from inspector.core.validators import Python, ValidationContext, compile_validators
from inspector.core.worker import pool
from inspector.core.worker.contexts import ValidatorContext
from inspector.core.worker.protocol import Target

SECTION = "## User code in a worker process (bench/usercode.py)"
CALL_GOAL_MS = 1.0
REVALIDATE_GOAL_S = 5.0
OUTPUTS = 10_000
CHECKS_PY = "def plain(output, ctx):\n    return '**' not in output\n"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ---- 1. one call ----------------------------------------------------------------------------


async def bench_call(folder: Path, calls: int) -> dict[str, list[float]]:
    """Per-call seconds for: the worker (judge), in-process direct, a daemon thread hop."""
    (folder / "checks.py").write_text(CHECKS_PY, encoding="utf-8")
    spec = scenario_from_dict(
        {
            "name": "bench-call",
            "prompt": {"user": "hi"},
            "validators": [{"kind": "python", "function": "checks.py:plain"}],
            "script": [{"text": "x"}],
        },
        source="bench",
        base_dir=folder,
    )
    [validator] = compile_validators(spec.validators, folder)
    namespace: dict[str, object] = {}
    exec(CHECKS_PY, namespace)  # the same function, in this process, for the peers
    fn = namespace["plain"]
    assert callable(fn)
    text = "Hi Sam, the meeting moved to 3pm."
    samples: dict[str, list[float]] = {"worker": [], "direct": [], "thread": []}
    for _ in range(50):  # warm-up: the worker, the thread pool, the caches
        await validator.judge(text, ValidationContext(attempt=1, step=1))
        await in_daemon_thread(fn, text, ValidatorContext(1, 1))
    for _ in range(calls):  # interleaved, so drift on the machine hits all three alike
        ctx = ValidationContext(attempt=1, step=1)
        t0 = time.perf_counter()
        verdict = await validator.judge(text, ctx)
        samples["worker"].append(time.perf_counter() - t0)
        assert verdict.status == "pass", verdict
        user_ctx = ctx.for_user()
        t0 = time.perf_counter()
        fn(text, user_ctx)
        samples["direct"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await in_daemon_thread(fn, text, user_ctx)
        samples["thread"].append(time.perf_counter() - t0)
    return samples


# ---- 2. re-validating 10,000 outputs ------------------------------------------------------------


async def bench_revalidate(folder: Path, repeats: int) -> tuple[list[float], list[float], int]:
    """(seconds with the python validator, seconds with the built-ins alone, outputs)."""
    record = await record_drafts(OUTPUTS, folder, python=True)
    scenario = scenario_of(record)
    builtins = [v for v in scenario.validators if not isinstance(v, Python)]
    assert len(builtins) == len(BUILTINS)
    builtins_only = ValidatorSet(builtins, scenario.base_dir, "bench")
    ours: list[float] = []
    peer: list[float] = []
    outputs = 0
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = await revalidate(record, scenario, ValidatorSet.of(scenario).compile(scenario))
        ours.append(time.perf_counter() - t0)
        assert result.flips == [] and result.outputs == OUTPUTS, result.flips[:3]
        assert {v.status for v in result.verdicts if v.validator == "plain"} == {"fail"}
        outputs = result.outputs
        gc.collect()
        t0 = time.perf_counter()
        await revalidate(record, scenario, builtins_only.compile(scenario))
        peer.append(time.perf_counter() - t0)
    return ours, peer, outputs


# ---- 3. a fresh worker ------------------------------------------------------------------------


async def bench_fresh(folder: Path, repeats: int) -> list[float]:
    target = Target("checks.py:plain", str(folder), "bench")
    samples = []
    for _ in range(repeats):
        pool.shutdown()  # as after a timeout: no warm worker left
        t0 = time.perf_counter()
        reply = await pool.call(target, ("x", ValidatorContext(1, 1)), {}, 60)
        samples.append(time.perf_counter() - t0)
        assert reply.error is None, reply.error
    return samples


# ---- the report ------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


def section(
    call: dict[str, list[float]],
    revalidation: tuple[list[float], list[float], int],
    fresh: list[float],
) -> tuple[str, bool]:
    worker = statistics.median(call["worker"])
    call_ok = worker * 1000 <= CALL_GOAL_MS
    ours, peer, outputs = revalidation
    rev, rev_peer = statistics.median(ours), statistics.median(peer)
    rev_ok = rev <= REVALIDATE_GOAL_S
    lines = [
        SECTION,
        "",
        f"Measured {machine()}. Each pair interleaved in one "
        "process. Reproduce with `python bench/usercode.py --write bench/RESULTS.md`.",
        "",
        f"### One python validator call over a warm worker (goal: median ≤ {CALL_GOAL_MS:g} ms)",
        "",
        f"{len(call['worker']):,} calls, each timed alone: `Validator.judge` through the worker "
        "against the same function called in this process, and on a reused daemon thread "
        "(how user code ran before the worker).",
        "",
        "| how | median (ms) | p90 (ms) | p99 (ms) | vs worker |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, label in (
        ("worker", "worker process (`Validator.judge`)"),
        ("thread", "daemon thread hop, in-process (before)"),
        ("direct", "direct call, in-process (floor)"),
    ):
        samples = call[key]
        median = statistics.median(samples)
        lines.append(
            f"| {label} | {ms(median)} | {ms(percentile(samples, 0.9))} | "
            f"{ms(percentile(samples, 0.99))} | {median / worker:.2f}x |"
        )
    lines += [
        "",
        f"- {'PASS' if call_ok else 'FAIL'}: median {ms(worker)} ms ≤ {CALL_GOAL_MS:g} ms",
        "",
        f"### Re-validating {outputs:,} recorded outputs with a python validator "
        f"(goal < {REVALIDATE_GOAL_S:g} s)",
        "",
        "Built-ins + one python validator (`revalidate` with compiling, as the command does it "
        "minus process start); the peer is the built-ins alone over the same outputs.",
        "",
        "| validators | re-validation (s) | per output (ms) | runs |",
        "|---|---:|---:|---:|",
        f"| built-ins + one python | {rev:.2f} | {rev / outputs * 1000:.3f} | {len(ours)} |",
        f"| built-ins alone (peer) | {rev_peer:.2f} | {rev_peer / outputs * 1000:.3f} "
        f"| {len(peer)} |",
        "",
        f"- {'PASS' if rev_ok else 'FAIL'}: {rev:.2f} s < {REVALIDATE_GOAL_S:g} s "
        f"(the python validator adds {(rev - rev_peer) / outputs * 1000:.3f} ms per output)",
        "",
        "### A fresh worker (informational)",
        "",
        f"The first call after every worker was killed (as after a timeout or a crash): median "
        f"{ms(statistics.median(fresh))} ms over {len(fresh)} (python start-up, the worker's "
        "imports, loading the user file).",
        "",
    ]
    return "\n".join(lines), call_ok and rev_ok


async def run(quick: bool) -> tuple[str, bool]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        call = await bench_call(folder, 300 if quick else 3000)
        revalidation = await bench_revalidate(folder, 1 if quick else 3)
        fresh = await bench_fresh(folder, 3 if quick else 10)
    return section(call, revalidation, fresh)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the tables here")
    parser.add_argument("--quick", action="store_true", help="smoke test: few repeats")
    args = parser.parse_args(argv)
    text, ok = asyncio.run(run(args.quick))
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    print(f"python {platform.python_version()} on {sys.platform}", file=sys.stderr)
    sys.exit(main())
