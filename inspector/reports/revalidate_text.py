"""The words of a re-validation: one run's verdicts and flips, and the pass/fail matrix of every
run of a scenario. ``agent-inspector revalidate`` prints them; the window's Flips tab shows the
same lines."""

from __future__ import annotations

from inspector.core.records import VERDICT_MARK
from inspector.core.revalidate import Matrix, Revalidation

MARKS = {"pass": "P", "fail": "F", "error": "E"}


def _verdict(status: str, name: str, reason: str) -> str:
    return f"{VERDICT_MARK[status]} {name}" + (f": {reason}" if status != "pass" and reason else "")


def accepted_text(step: int | None) -> str:
    """Which step's output was accepted: ``step 4``, or ``none``."""
    return f"step {step}" if step is not None else "none"


def format_result(result: Revalidation) -> str:
    lines = [
        f"run {result.run_id} ({result.scenario}) · {result.outputs} output(s) re-judged, "
        "no model call"
    ]
    by_step: dict[int, list[str]] = {}
    for v in result.verdicts:
        by_step.setdefault(v.step, []).append(_verdict(v.status, v.validator, v.reason))
    for step, verdicts in by_step.items():
        lines.append(f"#{step:<3} " + "  ".join(verdicts))
    if result.flips:
        lines.append(f"{len(result.flips)} flip(s):")
        for f in result.flips:
            lines.append(f"  #{f.step} {f.validator}: {f.before or '-'} → {f.after or '-'}")
    else:
        lines.append("no verdict flips")
    # A validator judging a step on one side only is not a flip: nothing changed its mind.
    for title, changes in (
        (
            "new verdict(s), from validators that did not judge these steps before",
            result.new_verdicts,
        ),
        ("dropped verdict(s), from validators no longer run", result.dropped_verdicts),
    ):
        if changes:
            lines.append(f"{len(changes)} {title}:")
            lines += [f"  #{c.step} {c.validator}: {c.before or c.after}" for c in changes]
    lines.append(
        f"accepted output: {accepted_text(result.accepted_before)} as recorded, "
        f"{accepted_text(result.accepted_after)} now"
    )
    return "\n".join(lines)


def format_matrix(table: Matrix) -> str:
    """Rows are runs, columns validators; a cell has one letter per judged output, in step
    order (P pass, F fail, E error)."""
    head = ["run_id", "status", *table.validators, "before", "now", "flips"]
    rows: list[list[str]] = [head]
    errors: dict[int, str] = {}  # row position -> why it could not be re-validated
    for r in table.rows:
        if r.error is not None:
            errors[len(rows)] = f"cannot re-validate: {r.error}"
            rows.append([r.run_id, r.status])
            continue
        cells = ["".join(MARKS[s] for s in r.cells.get(v, [])) or "-" for v in table.validators]
        before = "pass" if r.passed_before else "fail"
        now = f"pass (#{r.accepted_after})" if r.passed_after else "fail"
        rows.append([r.run_id, r.status, *cells, before, now, str(r.flips)])
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(len(head))]
    lines = [f"scenario {table.scenario} · {len(table.rows)} run(s) re-validated, no model call"]
    for at, row in enumerate(rows):
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        if at in errors:
            cells.append(errors[at])
        lines.append("  ".join(cells).rstrip())
    lines.append("cells: one letter per judged output, in step order (P pass, F fail, E error)")
    return "\n".join(lines)
