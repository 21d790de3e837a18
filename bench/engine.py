"""Engine overhead per step, side by side with pydantic-ai.

What is measured: one scripted turn of N steps, each a tool call (``lookup`` with a canned
result), followed by one final text answer — N + 1 model calls. The model is free on both sides
(the engine's ``ScriptedProvider``; pydantic-ai's ``Agent`` + ``FunctionModel``), so the wall time
of a turn is pure framework overhead: building requests, running the tool, recording the step.
Each framework runs the same turns, interleaved, in the same process; a turn's median wall time
divided by its N + 1 model calls is the per-step cost.

Why: a debugger records every step, and an agent turn can run to hundreds of steps. The engine
must cost a small fraction of a real framework's own overhead (goal: ≤ 0.1x pydantic-ai's
per-step time at every length), and its per-step cost must stay flat as the history grows
(goal: 1,000-step per-step within 2x of 10-step per-step) — a step must not re-process the whole
history. pydantic-ai is the reference because its per-step cost grows with the history.

Usage: ``python bench/engine.py [--write bench/RESULTS.md] [--quick]``. ``--quick`` is a smoke
test (10 and 100 steps, one run each); its goal verdicts are indicative only. Without ``--quick``
the exit status is 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UsageLimits
from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models.function import AgentInfo, FunctionModel

from inspector.core.loop import run_turn
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.providers.scripted import ScriptedProvider

LENGTHS = (10, 100, 1000)
QUICK_LENGTHS = (10, 100)
# Runs per length: (inspector, pydantic-ai). pydantic-ai needs ~30 s for one 1,000-step turn
# on a 2-core machine, so it runs that length once; the engine can afford more runs.
REPEATS = {10: (100, 30), 100: (30, 5), 1000: (9, 1)}
RATIO_GOAL = 0.1
FLATNESS_GOAL = 2.0
SECTION = "## Engine (bench/engine.py)"

SYSTEM = "You are a bench."
USER = "go"
TOOL_RESULT = "found"
FINAL = "done"

Turn = Callable[[], Awaitable[float]]  # runs one prepared turn, returns its timed seconds


# --- the two frameworks -----------------------------------------------------------------------


def bench_scenario(n: int) -> Scenario:
    data: dict[str, Any] = {
        "name": f"bench-{n}",
        "model": {"provider": "scripted", "name": "bench"},
        "prompt": {"system": SYSTEM, "user": USER},
        "tools": [
            {
                "name": "lookup",
                "description": "d",
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                },
                "result": TOOL_RESULT,
            }
        ],
        "policy": {"max_steps": n + 1, "max_attempts": 1},
        "script": [{"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}] * n
        + [{"text": FINAL}],
    }
    return scenario_from_dict(data, source=f"<bench-{n}>", base_dir=Path("."))


def inspector_turn(n: int) -> Turn:
    scenario = bench_scenario(n)

    async def turn() -> float:
        provider = ScriptedProvider(scenario.script)
        start = time.perf_counter()
        record = await run_turn(scenario, provider)
        elapsed = time.perf_counter() - start
        # A broken run must not be timed as a fast one.
        assert record.status == "succeeded", (record.status, record.termination, record.error)
        assert len(record.steps) == n + 1, len(record.steps)
        assert record.output == FINAL, record.output
        return elapsed

    return turn


def lookup(q: str) -> str:
    """Look something up."""
    return TOOL_RESULT


class _ScriptedFunction:
    """The ``FunctionModel`` function: N tool calls, then the final text. A counter rather than a
    scan of the history, so the model itself adds no history-length cost."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        if self.calls <= self.n:
            part = ToolCallPart("lookup", {"q": "x"}, tool_call_id=f"call_{self.calls}")
            return ModelResponse(parts=[part])
        return ModelResponse(parts=[TextPart(FINAL)])


def pydantic_ai_turn(n: int) -> Turn:
    function = _ScriptedFunction(n)
    agent = Agent(FunctionModel(function), system_prompt=SYSTEM, tools=[lookup])
    limits = UsageLimits(request_limit=None)  # the default of 50 requests would stop the turn

    async def turn() -> float:
        function.calls = 0
        start = time.perf_counter()
        result = await agent.run(USER, usage_limits=limits)
        elapsed = time.perf_counter() - start
        assert result.output == FINAL, result.output
        returns = sum(
            isinstance(part, ToolReturnPart)
            for message in result.all_messages()
            if isinstance(message, ModelRequest)
            for part in message.parts
        )
        assert function.calls == n + 1 and returns == n, (function.calls, returns)
        return elapsed

    return turn


# --- measurement ------------------------------------------------------------------------------


@dataclass
class Row:
    steps: int
    inspector_ms: float  # per model call, median turn
    pydantic_ai_ms: float
    runs: tuple[int, int]

    @property
    def ratio(self) -> float:
        return self.inspector_ms / self.pydantic_ai_ms


async def measure(n: int, repeats: tuple[int, int]) -> Row:
    turns = (inspector_turn(n), pydantic_ai_turn(n))
    times: tuple[list[float], list[float]] = ([], [])
    # Interleave the frameworks so drift on the machine hits both alike.
    for i in range(max(repeats)):
        for turn, runs, out in zip(turns, repeats, times, strict=True):
            if i < runs:
                gc.collect()
                out.append(await turn())
    calls = n + 1
    return Row(
        steps=n,
        inspector_ms=statistics.median(times[0]) / calls * 1e3,
        pydantic_ai_ms=statistics.median(times[1]) / calls * 1e3,
        runs=repeats,
    )


async def run_bench(lengths: tuple[int, ...], quick: bool) -> list[Row]:
    # Warm up both sides (imports, schema building, first-call caches) outside the measurement.
    await inspector_turn(3)()
    await pydantic_ai_turn(3)()
    rows = []
    for n in lengths:
        repeats = (1, 1) if quick else REPEATS[n]
        row = await measure(n, repeats)
        print(
            f"  {n:>5} steps: inspector {row.inspector_ms:.3f} ms/step, "
            f"pydantic-ai {row.pydantic_ai_ms:.3f} ms/step",
            file=sys.stderr,
            flush=True,
        )
        rows.append(row)
    return rows


# --- report -----------------------------------------------------------------------------------


def flatness(rows: list[Row]) -> float:
    return rows[-1].inspector_ms / rows[0].inspector_ms


def goals(rows: list[Row]) -> list[tuple[str, bool]]:
    worst = max(row.ratio for row in rows)
    return [
        (
            f"inspector ≤ {RATIO_GOAL}x pydantic-ai per step at every length (worst {worst:.3f}x)",
            worst <= RATIO_GOAL,
        ),
        (
            f"per step flat: {rows[-1].steps:,}-step ≤ {FLATNESS_GOAL}x {rows[0].steps:,}-step "
            f"({flatness(rows):.2f}x)",
            flatness(rows) <= FLATNESS_GOAL,
        ),
    ]


def report(rows: list[Row]) -> str:
    lines = [
        "| steps | inspector ms/step | pydantic-ai ms/step | ratio (inspector/pydantic-ai) "
        "| runs (inspector, pydantic-ai) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.steps:,} | {row.inspector_ms:.3f} | {row.pydantic_ai_ms:.3f} "
            f"| {row.ratio:.3f} | {row.runs[0]}, {row.runs[1]} |"
        )
    lines += [
        "",
        f"Flatness (inspector per step, {rows[-1].steps:,} steps / {rows[0].steps:,} steps): "
        f"{flatness(rows):.2f}x",
        "",
    ]
    lines += [f"- {'PASS' if ok else 'FAIL'}: {text}" for text, ok in goals(rows)]
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return platform.processor() or "unknown"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else "unknown"


def machine() -> str:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d}; {platform.platform()}; "
        f"Python {platform.python_version()}; CPU {cpu_model()}, nproc {cpus}; "
        f"pydantic {version('pydantic')}, pydantic-ai-slim {version('pydantic-ai-slim')}"
    )


def section(rows: list[Row]) -> str:
    return "\n".join(
        [
            SECTION,
            "",
            "A scripted turn of N steps (a tool call each, then a final answer: N + 1 model "
            "calls), run by the engine (`run_turn` + `ScriptedProvider`) and by pydantic-ai "
            "(`Agent` + `FunctionModel`) in the same process. ms/step = median turn wall time / "
            "(N + 1). pydantic-ai's model function is `async def` (a plain `def` runs in a "
            "worker thread and costs more), so the reference is its faster setup. Goals: ratio "
            "≤ 0.1 at every length; 1,000-step per-step within 2x of 10-step per-step. "
            "Reproduce with `make bench`.",
            "",
            f"Measured {machine()}.",
            "",
            report(rows),
            "",
        ]
    )


def write_section(path: Path, text: str) -> None:
    """Replace this bench's section of ``path`` (or append it), keeping every other section."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(old):
        new = pattern.sub(lambda _: text + "\n", old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the table here")
    parser.add_argument("--quick", action="store_true", help="smoke test: 10 and 100 steps, once")
    args = parser.parse_args(argv)

    rows = asyncio.run(run_bench(QUICK_LENGTHS if args.quick else LENGTHS, args.quick))
    text = section(rows)
    print(text)
    if args.write:
        write_section(args.write, text)
        print(f"wrote {args.write}", file=sys.stderr)
    passed = all(ok for _, ok in goals(rows))
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
