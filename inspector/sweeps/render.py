"""A sweep report as text (the terminal), CSV and self-contained HTML (``export``). All three
show the numbers of ``build_report`` — nothing is recomputed here."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Sequence

from inspector.sweeps.model import ArmStats, SweepReport
from inspector.sweeps.stats import Summary

UNKNOWN = "unknown"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def money(value: float | None) -> str:
    if value is None:
        return UNKNOWN
    return f"${value:.6f}" if value < 0.01 else f"${value:.4f}"


def num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval(arm: ArmStats) -> str:
    return f"[{pct(arm.pass_interval.low)}, {pct(arm.pass_interval.high)}]"


def versus(arm: ArmStats) -> str:
    v = arm.versus_baseline
    if v is None:
        return "baseline" if arm.runs else "-"
    sign = "+" if v.difference >= 0 else ""
    return (
        f"{sign}{v.difference * 100:.1f} pts "
        f"[{v.interval.low * 100:+.1f}, {v.interval.high * 100:+.1f}] p={v.p_value:.3g}"
    )


def _summary(s: Summary, digits: int = 1) -> str:
    return f"{num(s.mean, digits)} / {num(s.median, digits)} / {num(s.p95, digits)}"


def _cost(arm: ArmStats) -> str:
    c = arm.cost
    if c.per_run is None:
        return UNKNOWN
    return money(c.per_run)


def _per_accepted(arm: ArmStats) -> str:
    """unknown without a price; "-" when priced but nothing was accepted."""
    if arm.cost.per_run is None:
        return UNKNOWN
    return money(arm.cost.per_accepted) if arm.cost.per_accepted is not None else "-"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


SUMMARY_HEAD = ("arm", "runs", "pass", "95% CI", "vs baseline", "cost/run", "cost/accepted", "")


def summary_rows(report: SweepReport) -> list[list[str]]:
    rows = []
    for a in report.arms:
        runs = f"{a.runs}" + (f" (+{a.missing} missing)" if a.missing else "")
        front = "pareto" if a.pareto else ""
        rows.append(
            [
                a.name,
                runs,
                pct(a.pass_rate),
                interval(a),
                versus(a),
                _cost(a),
                _per_accepted(a),
                front,
            ]
        )
    return rows


def format_text(report: SweepReport) -> str:
    lines = [
        f"sweep {report.sweep_id} · {report.scenario} · {len(report.arms)} arm(s) x "
        f"{report.repeat} · {report.runs}/{report.expected} runs · seed {report.seed}",
        "",
        *_table([list(SUMMARY_HEAD), *summary_rows(report)]),
    ]
    for a in report.arms:
        lines += ["", f"arm {a.name}" + (f"  ({'; '.join(a.overrides)})" if a.overrides else "")]
        terms = ", ".join(f"{k} {v}" for k, v in a.terminations.items()) or "-"
        rates = " · ".join(f"{k} {pct(v)}" for k, v in a.rates.items()) or "-"
        detail = [
            ["pass", f"{pct(a.pass_rate)} {interval(a)} ({a.passed}/{a.runs})"],
            ["other endings", rates],
            ["terminations", terms],
            ["attempts (mean/median/p95)", _summary(a.attempts, 2)],
            ["steps", _summary(a.steps, 2)],
            ["input tokens", _summary(a.input_tokens)],
            ["output tokens", _summary(a.output_tokens)],
            ["latency ms", _summary(a.latency_ms)],
            ["transport retries", str(a.transport_retries)],
            ["cost per run / accepted", f"{_cost(a)} / {_per_accepted(a)}"],
        ]
        if a.cost.note:
            detail.append(["cost note", a.cost.note])
        lines += ["  " + line for line in _table(detail)]
    axis = "cost per run" if report.pareto_axis == "cost" else "tokens per run (a cost is unknown)"
    front = ", ".join(a.name for a in report.arms if a.pareto) or "-"
    lines += ["", f"pareto front ({axis} vs pass rate): {front}"]
    return "\n".join(lines)


CSV_COLUMNS = (
    "arm", "overrides", "runs", "missing", "passed", "pass_rate", "pass_low", "pass_high",
    "fallback_rate", "failed_rate", "error_rate", "diff_vs_baseline", "diff_low", "diff_high",
    "p_value", "attempts_mean", "attempts_median", "attempts_p95", "steps_mean",
    "input_tokens_mean", "output_tokens_mean", "latency_ms_mean", "latency_ms_median",
    "latency_ms_p95", "transport_retries", "cost_per_run", "cost_per_accepted", "pareto",
    "terminations",
)  # fmt: skip


def _cell(value: object) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def format_csv(report: SweepReport) -> str:
    """One row per arm; an unknown cost is the word ``unknown``, never an empty or 0 cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for a in report.arms:
        v = a.versus_baseline
        unknown = a.cost.per_run is None
        writer.writerow(
            _cell(x)
            for x in (
                a.name,
                "; ".join(a.overrides),
                a.runs,
                a.missing,
                a.passed,
                a.pass_rate,
                a.pass_interval.low,
                a.pass_interval.high,
                a.rates.get("fallback"),
                a.rates.get("failed"),
                a.rates.get("error"),
                v and v.difference,
                v and v.interval.low,
                v and v.interval.high,
                v and v.p_value,
                a.attempts.mean,
                a.attempts.median,
                a.attempts.p95,
                a.steps.mean,
                a.input_tokens.mean,
                a.output_tokens.mean,
                a.latency_ms.mean,
                a.latency_ms.median,
                a.latency_ms.p95,
                a.transport_retries,
                UNKNOWN if unknown else a.cost.per_run,
                UNKNOWN if unknown else a.cost.per_accepted,
                a.pareto,
                "; ".join(f"{k}={n}" for k, n in a.terminations.items()),
            )
        )
    return buffer.getvalue()


def _bars(report: SweepReport) -> str:
    """Pass rate per arm with its interval as a whisker, as inline SVG."""
    row, width, left = 28, 420, 10
    height = row * len(report.arms) + 10
    parts = [f'<svg width="{width + 60}" height="{height}" role="img" aria-label="pass rates">']
    for i, a in enumerate(report.arms):
        y = 5 + i * row
        rate = a.pass_rate or 0.0
        low, high = a.pass_interval.low, a.pass_interval.high
        title = html.escape(f"{a.name}: {pct(a.pass_rate)} {interval(a)}")
        parts += [
            f"<g><title>{title}</title>",
            f'<rect x="{left}" y="{y}" width="{rate * width:.1f}" height="{row - 10}" '
            f'fill="{"#3a7" if a.pareto else "#79a"}"/>',
            f'<line x1="{left + low * width:.1f}" x2="{left + high * width:.1f}" '
            f'y1="{y + (row - 10) / 2}" y2="{y + (row - 10) / 2}" stroke="#000"/>',
            f'<text x="{left + width + 6}" y="{y + row - 14}" font-size="12">'
            f"{pct(a.pass_rate)}</text></g>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def format_html(report: SweepReport) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in SUMMARY_HEAD[:-1]) + "<th>pareto</th>"
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in summary_rows(report)
    )
    details = []
    for a in report.arms:
        terms = ", ".join(f"{esc(k)} {v}" for k, v in a.terminations.items()) or "-"
        details.append(
            f"<h3>{esc(a.name)}</h3><p><code>{esc('; '.join(a.overrides) or '(scenario as is)')}"
            f"</code></p><ul><li>terminations: {terms}</li>"
            f"<li>attempts mean/median/p95: {_summary(a.attempts, 2)}</li>"
            f"<li>tokens in / out (mean): {num(a.input_tokens.mean)} / "
            f"{num(a.output_tokens.mean)}</li>"
            f"<li>latency ms mean/median/p95: {_summary(a.latency_ms)}</li>"
            f"<li>cost note: {esc(a.cost.note or '-')}</li></ul>"
        )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>sweep {esc(report.sweep_id)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style></head><body>"
        f"<h1>Sweep {esc(report.sweep_id)}</h1>"
        f"<p>{esc(report.scenario)} · {len(report.arms)} arm(s) x {report.repeat} · "
        f"{report.runs}/{report.expected} runs · seed {report.seed} · baseline "
        f"{esc(report.baseline)} · report version {report.version}</p>"
        f"<table><tr>{head}</tr>{body}</table><h2>Pass rate (95% Wilson interval)</h2>"
        f"{_bars(report)}<h2>Arms</h2>{''.join(details)}</body></html>\n"
    )
