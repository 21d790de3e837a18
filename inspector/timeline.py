"""A readable, live timeline of a turn for the terminal: one line per step as it finishes
(attempt, kind, status, verdicts, forced markers, tokens, latency), what user code printed and
the feedback under it, and a summary when the run ends. An event subscriber like the store and
the GUI."""

from __future__ import annotations

import json
from typing import TextIO

from inspector.core.events import Event, RunFinished, RunStarted, StepFinished
from inspector.core.records import VERDICT_MARK, RunRecord, Step, step_kind
from inspector.reports.labels import (
    feedback_label,
    feedback_text,
    forced_markers,
    outcome,
    step_note,
)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _forced(step: Step) -> str:
    labels = [label for label, _ in forced_markers(step.forced)]
    return "[forced: " + " ".join(labels) + "]" if labels else ""


def _what(step: Step) -> str:
    response = step.response
    if response is None:
        return step.error or ""
    if step.status == "error":
        return f"error: {step.error}"
    if response.refusal:
        return f"refusal: {response.refusal}"
    if response.tool_calls:
        errors = {r.tool_call_id: r.error for r in step.tool_results if r.error}
        calls = [
            f"{c.name}({_clip(c.arguments_json(), 40)})"
            + (f" → ! {_clip(errors[c.id], 50)}" if c.id in errors else "")
            for c in response.tool_calls
        ]
        return ", ".join(calls)
    return json.dumps(response.text, ensure_ascii=False) if response.text else ""


def step_line(step: Step) -> str:
    verdicts = " ".join(
        f"{VERDICT_MARK[v.status]} {v.validator}" + ("" if v.ok else f": {_clip(v.reason, 50)}")
        for v in step.verdicts
    )
    usage = step.response.usage if step.response else None
    tokens = f"in {usage.input_tokens} out {usage.output_tokens}" if usage else ""
    latency = f"{step.latency_ms:.0f} ms" if step.latency_ms is not None else ""
    kind = step_kind(step)
    parts = [
        f"#{step.index:<3} a{step.attempt:<2} {'' if kind == step.status else kind:<9} "
        f"{step.status:<17}",
        _clip(_what(step), 60),
        verdicts,
        _forced(step),
        "[cleared]" if step.cleared else "",
        tokens,
        latency,
    ]
    return "  ".join(p for p in parts if p)


CAPTURED_LINES = 10  # per validator or tool; the record keeps up to 16,000 characters


def captured_lines(step: Step) -> list[str]:
    """What the step's python validators and tool functions printed, each under its name."""
    printed = [(f"validator {v.validator}", v.captured) for v in step.verdicts]
    printed += [(f"tool {r.name}", r.captured) for r in step.tool_results]
    printed.append(("the feedback builder / fallback function", step.captured))
    lines: list[str] = []
    for who, text in printed:
        if not text:
            continue
        lines.append(f"       ↳ printed by {who}:")
        shown = text.splitlines()
        lines += [f"         │ {_clip(line, 100)}" for line in shown[:CAPTURED_LINES]]
        if len(shown) > CAPTURED_LINES:
            lines.append(f"         │ … {len(shown) - CAPTURED_LINES} more line(s) in the record")
    return lines


def summary_lines(record: RunRecord) -> list[str]:
    b = record.budgets
    ended = outcome(record.status, record.termination, record.fallback_trigger)
    lines = [
        f"{ended} · attempts {b.attempts_used}/{b.max_attempts}"
        f" · steps {b.steps_used}/{b.max_steps} · tokens in {record.usage.input_tokens}"
        f" / out {record.usage.output_tokens} · {record.duration_ms:.0f} ms",
    ]
    if record.error is not None:
        lines.append(f"error: {record.error.type}: {record.error.message}")
    if record.output is not None:
        value = record.output
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        label = "fallback" if record.status == "fallback" else "output"
        lines.append(f"{label}: {text}")
    return lines


class TimelinePrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._write(f"{event.scenario} · {event.provider}/{event.model} · run {event.run_id}")
        elif isinstance(event, StepFinished):
            step = event.step
            self._write(step_line(step))
            if note := step_note(step):
                self._write(f"       ↳ {note}")
            for line in captured_lines(step):
                self._write(line)
            for message in step.feedback:
                text = _clip(feedback_text(message), 90)
                self._write(f"       {feedback_label(message.role, text)}")
        elif isinstance(event, RunFinished):
            for line in summary_lines(event.record):
                self._write(line)

    def _write(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()
