"""The window's sentences about a run: the line above the timeline, what to tell the user about a
run that did not succeed, and the tokens used so far (the status bar's). Qt-free, in the words
of ``labels``."""

from __future__ import annotations

import html

from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Step, Usage
from inspector.reports.labels import outcome, step_cap


def run_title(run: LiveRun) -> str:
    """The line above the timeline: which run this is (scenario, id, model, when, where it came
    from) and that it runs. How it ended is the outcome header's (``turn_outcome``), not
    repeated here."""
    header, record = run.header, run.record
    scenario = record.scenario if record else header.scenario if header else "run"
    parts = [f"<b>{html.escape(scenario)}</b>", f"run {run.run_id}"]
    source = record or header
    if source is not None:
        model = " · ".join(html.escape(p) for p in (source.provider, source.model) if p)
        if model:
            parts.append(model)
        if source.started_at:
            parts.append(f"started {source.started_at[:16].replace('T', ' ')} UTC")
    if record is None:
        parts.append("running…")
        cap = step_cap(header.policy.max_steps) if header and not header.via else ""
        if cap:
            parts.append(cap)
    else:
        if record.replay_of:
            parts.append(f"replay of {record.replay_of}")
        if record.fidelity is not None:  # an imported run: what a replay of it would miss
            fidelity = record.fidelity
            gaps = ", ".join(fidelity.lacks())
            lacks = f", the source lacks {gaps}" if gaps else ""
            source_name = html.escape(f"{fidelity.source} ({fidelity.format})")
            replay = html.escape(fidelity.replay_verdict())
            parts.append(f"<i>imported from {source_name}: {replay}{lacks}</i>")
    via = record.via if record else header.via if header else None
    if via:
        parts.append(f"via {via}")
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


class RunningUsage:
    """The tokens a run has used so far, summed as its steps finish: O(1) a step (summing the
    whole run at each step made a 100,000-step run quadratic)."""

    def __init__(self) -> None:
        self._run: LiveRun | None = None
        self._usage = Usage()

    def after(self, run: LiveRun, step: Step) -> Usage:
        """The usage of ``run`` once ``step`` (just folded into it) finished."""
        if run is not self._run:  # another run: summed once from its steps
            self._run, self._usage = run, usage_so_far(run)
        elif step.response is not None:
            self._usage = self._usage + step.response.usage
        return self._usage
