"""A ``Comparison`` as an aligned side-by-side table for the terminal (one column per run).

Rows whose cells differ are marked ``≠`` in the left margin; the first step where the runs part
ways is marked ``▶`` and followed by what differs there. Cells are clipped to fit ``width``
(100 columns by default holds four runs).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from inspector.core.records import Forced
from inspector.reports.compare import (
    Comparison,
    Divergence,
    FieldDiff,
    Outcome,
    StepCell,
    StepRow,
)
from inspector.reports.labels import forced_label

DIFFERS, SAME, DIVERGES = "≠ ", "  ", "▶ "
ABSENT = "—"
MIN_CELL = 12
OUTCOME_LABELS = ("model latency", "total tokens", "termination")


def _clip(text: str, width: int) -> str:
    """One line of at most ``width`` characters; leading indentation is kept."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def show(value: Any) -> str:
    """A value as one short line: strings as they are, None as a dash, the rest as JSON."""
    if value is None:
        return ABSENT
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class _Table:
    def __init__(self, runs: int, labels: Sequence[str], width: int) -> None:
        self.runs = runs
        longest = max((len(label) for label in labels), default=8)
        # Wide enough for a status like "a1 failed_validation" in each of four columns.
        self.label_width = min(longest, 22 if runs <= 2 else 18 if runs == 3 else 14)
        self.cell_width = max((width - 2 - self.label_width) // runs, MIN_CELL)
        self.lines: list[str] = []

    def row(self, label: str, cells: Sequence[str], *, mark: str | None = None) -> None:
        if mark is None:
            mark = DIFFERS if any(c != cells[0] for c in cells[1:]) else SAME
        head = mark + _clip(label, self.label_width).ljust(self.label_width)
        body = "".join((" " + _clip(c, self.cell_width - 1)).ljust(self.cell_width) for c in cells)
        self.lines.append((head + body).rstrip())

    def text(self, line: str) -> None:
        self.lines.append(line)


def render_comparison(comparison: Comparison, *, width: int = 100) -> str:
    n = len(comparison.runs)
    table = _Table(n, _labels(comparison), width)
    names = comparison.scenarios
    table.text(f"compare {n} runs of {' / '.join(names)}")
    table.row("run", [r.run_id for r in comparison.runs], mark=SAME)
    table.row("started", [r.started_at[:19].replace("T", " ") for r in comparison.runs], mark=SAME)
    table.row("model", [f"{r.provider}/{r.model}" for r in comparison.runs])
    if any(r.replay_of for r in comparison.runs):
        table.row("replay of", [show(r.replay_of) for r in comparison.runs])
    if any(r.overrides for r in comparison.runs):
        table.row("--set", [" ".join(r.overrides) or ABSENT for r in comparison.runs])
    _diff_section(table, "policy", comparison.policy_diffs)
    _diff_section(table, "scenario", comparison.scenario_diffs)
    table.text("steps")
    for row in comparison.steps:
        _step_rows(table, row, comparison.divergence, width)
    if comparison.divergence is None:
        table.text("  no divergence: every step sent and received the same")
    table.text("outcome")
    _outcome_rows(table, comparison.outcomes)
    return "\n".join(table.lines) + "\n"


def _labels(comparison: Comparison) -> list[str]:
    labels = [d.field for d in comparison.policy_diffs + comparison.scenario_diffs]
    labels += ["  " + v for row in comparison.steps for v in row.validators]
    return [*labels, *OUTCOME_LABELS]


def _diff_section(table: _Table, title: str, diffs: list[FieldDiff]) -> None:
    if not diffs:
        table.text(f"{title}: same")
        return
    table.text(f"{title} (only what differs)")
    for diff in diffs:
        table.row(diff.field, [show(v) for v in diff.values], mark=DIFFERS)


def _step_rows(table: _Table, row: StepRow, divergence: Divergence | None, width: int) -> None:
    cells = row.cells
    diverges_here = divergence is not None and divergence.index == row.index
    table.row(
        f"step {row.index}",
        [f"a{c.attempt} {c.status}" if c else ABSENT for c in cells],
        mark=DIVERGES if diverges_here else None,
    )
    if any(c and c.tool_calls for c in cells):
        table.row("  calls", [", ".join(c.tool_calls) or ABSENT if c else "" for c in cells])
    for validator in row.validators:
        table.row("  " + validator, [_verdict_text(c, validator) if c else "" for c in cells])
    table.row(
        "  tokens", [f"in {c.input_tokens} · out {c.output_tokens}" if c else "" for c in cells]
    )
    marks = [_marks(c.cleared, c.forced) if c else "" for c in cells]
    if any(marks):
        table.row("  marks", [m or ABSENT for m in marks])
    if any(c and c.error for c in cells):
        table.row("  error", [show(c.error) if c else "" for c in cells])
    if diverges_here and divergence is not None:
        for line in divergence_lines(divergence, width):
            table.text(line)


def _verdict_text(cell: StepCell, validator: str) -> str:
    verdict = cell.verdict(validator)
    if verdict is None:
        return ABSENT
    if verdict.status == "pass":
        return "pass"
    return f"{verdict.status}: {verdict.reason}" if verdict.reason else verdict.status


def step_marks(cleared: bool, forced: Forced | None) -> list[str]:
    """A step's markers: ``cleared`` and how the loop forced its request."""
    return [p for p in ("cleared" if cleared else "", forced_label(forced)) if p]


def _marks(cleared: bool, forced: Forced | None) -> str:
    return " ".join(step_marks(cleared, forced))


def divergence_what(divergence: Divergence) -> str:
    """What differs first, in words: ``the requests differ at messages[3]``."""
    return {
        "request": f"the requests differ at {divergence.field}",
        "response": f"the responses differ in {divergence.field}",
        "steps": "only some runs got this far",
    }[divergence.aspect]


def divergence_lines(divergence: Divergence, width: int = 100) -> list[str]:
    """Where the runs part ways, and each run's value of the first differing part."""
    lines = [f"  ↳ first divergence: {divergence_what(divergence)}"]
    for position, value in enumerate(divergence.values, start=1):
        lines.append(_clip(f"      run {position}: {_message_text(value)}", width))
    return lines


def _message_text(value: Any) -> str:
    if isinstance(value, dict) and "role" in value:  # a chat message: role and what it says
        calls = ", ".join(c.get("name", "") for c in value.get("tool_calls") or ())
        content = value.get("content") or (f"calls {calls}" if calls else "")
        return f"{value['role']}: {show(content)}"
    return show(value)


def _outcome_rows(table: _Table, outcomes: list[Outcome]) -> None:
    table.row("status", [o.status for o in outcomes])
    table.row(
        "termination",
        [
            f"{o.fallback_trigger} → {o.termination}" if o.fallback_trigger else show(o.termination)
            for o in outcomes
        ],
    )
    table.row("attempts", [f"{o.attempts_used}/{o.max_attempts}" for o in outcomes])
    table.row("steps", [f"{o.steps_used}/{o.max_steps}" for o in outcomes])
    table.row("tokens", [f"in {o.input_tokens} · out {o.output_tokens}" for o in outcomes])
    table.row("total tokens", [str(o.total_tokens) for o in outcomes])
    table.row("model latency", [f"{o.latency_ms:.0f} ms" for o in outcomes])
    table.row("duration", [f"{o.duration_ms:.0f} ms" for o in outcomes])
    table.row("output", [show(o.output) for o in outcomes])
    if any(o.error for o in outcomes):
        table.row("error", [show(o.error) for o in outcomes])
