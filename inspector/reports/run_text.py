"""The window's sentences about a run: the line above the timeline, what to tell the user about a
run that did not succeed, and the tokens used so far (the status bar's). Qt-free, in the words
of ``labels``."""

from __future__ import annotations

from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Usage
from inspector.reports.labels import outcome


def run_title(run: LiveRun) -> str:
    """The line above the timeline: which run this is and how it ended (or that it runs)."""
    header, record = run.header, run.record
    scenario = record.scenario if record else header.scenario if header else "run"
    parts = [f"<b>{scenario}</b>", f"run {run.run_id}"]
    if record is None:
        parts.append("running…")
    else:
        ended = outcome(record.status, record.termination, record.fallback_trigger)
        steps, attempts = len(record.steps), record.budgets.attempts_used
        parts += [
            ended,
            f"{steps} step{'s' * (steps != 1)}",
            f"{attempts} attempt{'s' * (attempts != 1)}",
        ]
        if record.replay_of:
            parts.append(f"replay of {record.replay_of}")
    return " · ".join(parts)


def record_problem(record: RunRecord) -> str | None:
    """What to tell the user about a finished run that did not succeed (None: nothing)."""
    if record.status in ("succeeded", "fallback"):
        return None
    text = (
        f"Run {record.run_id} {outcome(record.status, record.termination, record.fallback_trigger)}"
    )
    return f"{text}: {record.error.message}" if record.error else text


def usage_so_far(run: LiveRun) -> Usage:
    """The tokens a run used: its record's, or the sum of its finished steps' while it runs."""
    if run.record is not None:
        return run.record.usage
    steps = [s.step for s in run.steps if s.step is not None and s.step.response is not None]
    return Usage(
        input_tokens=sum(s.response.usage.input_tokens for s in steps if s.response),
        output_tokens=sum(s.response.usage.output_tokens for s in steps if s.response),
    )
