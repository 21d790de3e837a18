"""The Model saw tab's marks and diff over long turns (issue 14).

What is measured: turns of N ``lookup`` tool calls, then an answer a validator rejects, then
an accepted one (N + 2 steps; every request re-sends the whole history), their requests built
by the loop's own ``Conversation`` and ``build_request`` (views of one growing list, as the
engine makes them and the store loads them). At N = 100, 1,000 and 10,000, µs per call, the
best of 7 batches of calls, in this process:

- ``request_marks`` of the last step (attempt 2: the kept answer and the feedback of attempt 1
  are badged, two messages are NEW) and of a work step in the middle of the turn;
- ``request_diff`` of the last step against the previous call (here also the previous
  attempt's request).

Peer, in the same run: the compare view's line diff of the same two requests
(``compare_lines.diff_requests``, every message's lines), at 100 and 1,000 steps only (it
grows with the history: about a second at 1,000 steps, one batch there).

Goal: flat — each 10,000-step figure within 1.5x of the 100-step one; the diff well under 1 ms.

Many attempts: a blind retry of A one-step attempts (every request the first one again, as
``feedback_history = "none"`` sends), A = 10, 1,000 and 10,000: ``request_marks`` of the last
step with the run's ``FailureIndex`` kept (what the Model saw pane does), the index built once
over the run (each attempt looked at once: what the pane pays the first time it shows a step
of the run), and, as the peer, ``request_marks`` without a kept index (it builds one). Goal:
the marks with the index kept flat (10,000 attempts within 1.5x of 10).

Usage: ``python bench/model_saw.py [--write bench/RESULTS.md] [--quick]`` (``--quick``: 100 and
1,000 steps, 10 and 1,000 attempts).
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

from engine import machine  # bench/engine.py (same folder)
from results import write_section  # bench/results.py

from inspector.core.asyncrun import run_small
from inspector.core.history import Conversation
from inspector.core.messages import ToolCall, assistant, tool_result, user
from inspector.core.output import plan_output
from inspector.core.policy import Policy
from inspector.core.records import (
    Budgets,
    RunRecord,
    Step,
    StepRequest,
    StepResponse,
    ToolResult,
    ToolSpec,
    Verdict,
)
from inspector.core.requests import build_request
from inspector.reports.compare_lines import diff_requests
from inspector.reports.request_diff import request_diff
from inspector.reports.request_marks import FailureIndex, request_marks

SECTION = "## Model saw: marks and diff over long turns (bench/model_saw.py)"
LENGTHS = (100, 1000, 10_000)
QUICK_LENGTHS = (100, 1000)
ATTEMPTS = (10, 1000, 10_000)
QUICK_ATTEMPTS = (10, 1000)
PEER_UP_TO = 1000
GOAL = 1.5


async def composed(n: int) -> RunRecord:
    """A turn of ``n`` ``lookup`` calls, a rejected answer and an accepted one, its requests
    built by the loop's own history and request code (``Conversation``, ``build_request``):
    exactly what the loop sends, without the provider and tools."""
    policy = Policy.model_validate({"max_steps": n + 3, "final_step": "none", "max_attempts": 2})
    tools = [ToolSpec(name="lookup", description="Look it up")]
    plan = plan_output(None, policy.output_mode, ["lookup"])
    conversation = Conversation([user("Look it up.")], policy, tool_names=["lookup"])
    steps: list[Step] = []

    def request(index: int) -> StepRequest:
        made, _ = build_request(
            index=index,
            system="You look things up.",
            history=conversation.messages,
            offered=tools,
            plan=plan,
            has_user_tools=True,
            policy=policy,
        )
        return made

    for index in range(1, n + 1):
        call = ToolCall(id=f"call_{index}", name="lookup", arguments={"q": "x"})
        result = ToolResult(tool_call_id=call.id, name="lookup", content="Found it.")
        steps.append(
            Step(
                index=index,
                attempt=1,
                status="success",
                request=request(index),
                response=StepResponse(tool_calls=[call]),
                tool_results=[result],
            )
        )
        conversation.add_work(
            (assistant(None, (call,)), tool_result(call.id, result.content, "lookup"))
        )
    rejected = request(n + 1)
    verdicts = [Verdict.failed("regex_absent", "found *", "Plain text.")]
    feedback = await conversation.add_failure(1, n + 1, assistant("**done**"), None, verdicts)
    steps.append(
        Step(
            index=n + 1,
            attempt=1,
            status="failed_validation",
            request=rejected,
            response=StepResponse(text="**done**"),
            verdicts=verdicts,
            feedback=feedback,
        )
    )
    steps.append(
        Step(
            index=n + 2,
            attempt=2,
            status="success",
            request=request(n + 2),
            response=StepResponse(text="done"),
        )
    )
    return RunRecord(
        run_id=f"bench-{n}",
        scenario="model-saw",
        started_at="2026-01-01T00:00:00+00:00",
        policy=policy,
        status="succeeded",
        budgets=Budgets(max_attempts=2, max_steps=n + 3),
        steps=steps,
    )


def blind_retry(attempts: int) -> list[Step]:
    """``attempts`` one-step attempts, each sending the first request again (no feedback and
    no kept answer in it), the last one accepted."""
    request = StepRequest(system="You write SMS.", messages=[user("Tell Sam the meeting moved.")])
    verdicts = [Verdict.failed("max_length", "too long", "Shorter.")]
    failed = Step(
        index=1,
        attempt=1,
        status="failed_validation",
        request=request,
        response=StepResponse(text="Sam, the meeting moved to 3pm today; please confirm."),
        verdicts=verdicts,
    )
    steps = [failed.model_copy(update={"index": n, "attempt": n}) for n in range(1, attempts)]
    last = Step(
        index=attempts,
        attempt=attempts,
        status="success",
        request=request,
        response=StepResponse(text="Meeting moved to 3pm."),
    )
    return [*steps, last]


def measure_attempts(counts: tuple[int, ...]) -> list[dict[str, float]]:
    """Per attempt count: µs of the last step's marks with the index kept, of building the
    index once, and of the marks without a kept index (the peer)."""
    runs = [blind_retry(n) for n in counts]
    kept = []
    for steps in runs:
        index = FailureIndex()
        marks = request_marks(steps, len(steps), None, index)
        assert index.visited == len(steps) - 1 and not marks.badges
        kept.append(index)
    rows: list[dict[str, float]] = [{"attempts": n} for n in counts]
    timed = {
        "marks_kept": [
            lambda s=steps, i=index: request_marks(s, len(s), None, i)
            for steps, index in zip(runs, kept, strict=True)
        ],
        "index_once": [lambda s=steps: FailureIndex().update(s) for steps in runs],
        "peer": [lambda s=steps: request_marks(s, len(s)) for steps in runs],
    }
    for key, calls in timed.items():
        for row, took in zip(rows, interleaved_us(calls), strict=True):  # type: ignore[arg-type]
            row[key] = took
    for row in rows:
        print(row, flush=True)
    return rows


def interleaved_us(calls: list[Callable[[], object]], batches: int = 7) -> list[float]:
    """Microseconds per call of each of ``calls``: the best of ``batches`` batches (about
    20 ms each), the calls' batches taken in turn, so a shared machine's load falls on all
    lengths alike (and only ever adds time: the best is the figure)."""
    timers = [timeit.Timer(call) for call in calls]
    numbers = [max(1, timer.autorange()[0] // 10) for timer in timers]
    best = [float("inf")] * len(calls)
    for _ in range(batches):
        for k, (timer, number) in enumerate(zip(timers, numbers, strict=True)):
            best[k] = min(best[k], timer.timeit(number) / number * 1e6)
    return best


def measure(lengths: tuple[int, ...]) -> list[dict[str, object]]:
    cases = [case(n, run_small(composed(n))) for n in lengths]
    rows: list[dict[str, object]] = [
        {"n": n, "messages": c["messages"]} for n, c in zip(lengths, cases, strict=True)
    ]
    for key in ("marks_last", "marks_middle", "diff"):
        for row, took in zip(rows, interleaved_us([c[key] for c in cases]), strict=True):  # type: ignore[misc]
            row[key] = took
    for row, c in zip(rows, cases, strict=True):
        n = int(row["n"])  # type: ignore[call-overload]
        # About a second a call at 1,000 steps: one batch there.
        row["peer"] = (
            interleaved_us([c["peer"]], batches=1 + 2 * (n < 1000))[0] if n <= PEER_UP_TO else None
        )  # type: ignore[list-item]
        print(row, flush=True)
    return rows


def case(n: int, record: RunRecord) -> dict[str, object]:
    """The calls timed at length ``n``, checked once first."""
    steps, policy = record.steps, record.policy
    last = steps[-1]
    assert last.attempt == 2 and len(steps) == n + 2
    marks = request_marks(steps, last.index, policy)
    assert marks.new_count(len(last.request.messages)) == 2 and len(marks.badges) == 2
    before = steps[-2].request
    diff = request_diff(before, last.request)
    assert diff.added == 5 and diff.skipped == len(before.messages)
    return {
        "messages": len(last.request.messages),
        "marks_last": lambda: request_marks(steps, last.index, policy),
        "marks_middle": lambda: request_marks(steps, n // 2, policy),
        "diff": lambda: request_diff(before, last.request),
        "peer": lambda: diff_requests([before, last.request]),
    }


def section(rows: list[dict[str, object]], attempt_rows: list[dict[str, float]]) -> str:
    load = os.getloadavg()
    lines = [
        SECTION,
        "",
        f"Measured {machine()}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        "(the machine is shared).",
        "",
        "A turn of N `lookup` tool calls, a rejected answer, then an accepted one (N + 2 "
        "steps), built by the loop's own `Conversation` and `build_request`. µs per call, "
        "the best of 7 batches taken in turn across the lengths, of "
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
    lines += [
        "",
        "A blind retry of A one-step attempts (each request the first one again): µs of "
        "the last step's marks with the run's `FailureIndex` kept (the Model saw pane keeps "
        "one per run), of building that index once (each attempt looked at once), and, the "
        "peer, of the marks without a kept index.",
        "",
        "| attempts | marks, last step, index kept | index built once | peer: marks, no index |",
        "|---:|---:|---:|---:|",
    ]
    for counted in attempt_rows:
        lines.append(
            f"| {counted['attempts']:,.0f} | {counted['marks_kept']:.1f} | "
            f"{counted['index_once']:,.0f} | {counted['peer']:,.0f} |"
        )
    first_a, last_a = attempt_rows[0], attempt_rows[-1]
    ratio = last_a["marks_kept"] / first_a["marks_kept"]
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    lines += [
        "",
        f"- {verdict}: marks, last step, index kept, flat: {last_a['attempts']:,.0f} attempts "
        f"{ratio:.2f}x of {first_a['attempts']:,.0f} (goal ≤ {GOAL}x)",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="update this RESULTS.md section")
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 steps only")
    args = parser.parse_args()
    rows = measure(QUICK_LENGTHS if args.quick else LENGTHS)
    attempt_rows = measure_attempts(QUICK_ATTEMPTS if args.quick else ATTEMPTS)
    text = section(rows, attempt_rows)
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
