"""One run as a self-contained HTML page a user can attach to a bug report.

Inline CSS, no script, nothing loaded from the network. The page shows the step timeline grouped
by attempt, per step what the model saw, its response, tool results, verdicts with reasons and
the feedback injected; cleared attempts and forced steps are marked; then the three views of
DESIGN §4 (the final call's input, the persisted transcript, what a streaming UI showed and
cleared). The template is autoescaped and renders the *redacted* record dump only; the page is
scrubbed for key-shaped tokens once more at the end.
"""

from __future__ import annotations

import json
from functools import cache
from itertools import groupby
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from inspector import __version__
from inspector.core.records import RunRecord, Step
from inspector.core.shared_list import common_prefix
from inspector.reports import EXPORT_VERSION
from inspector.reports.jsonl_requests import RequestDeltas
from inspector.reports.labels import forced_label, step_kind, step_note, why_ended
from inspector.reports.redact import redacted, scrub_keys

TEMPLATE = "run_report.html.j2"


def render_html(record: RunRecord, *, synthesized: bool = False) -> str:
    """The report page. ``synthesized``: the run had no stored event log (said on the page)."""
    page = (
        _environment()
        .get_template(TEMPLATE)
        .render(**report_context(record), synthesized=synthesized)
    )
    return scrub_keys(page)


def report_context(record: RunRecord) -> dict[str, Any]:
    """What the template renders: the redacted record dump plus the derived views.

    Each step's request carries only the messages that are new since the previous request (see
    ``repeated_messages``); dumping every full request would make the page — and its build
    time — grow with the square of the turn's length."""
    run: dict[str, Any] = redacted(record.model_dump(mode="json", exclude={"steps"}))
    run["steps"] = []
    previous: Step | None = None
    raw_deltas = RequestDeltas()  # raw bodies repeat the history too: written as in JSONL
    for step in record.steps:
        repeated = repeated_messages(previous, step)
        data = redacted(
            step.model_dump(mode="json", exclude={"request": {"messages"}, "raw": True})
        )
        data["raw"] = redacted(raw_deltas.raw(step.index, step.raw))
        data["kind"] = step_kind(step)
        data["note"] = step_note(step)
        data["forced_label"] = forced_label(step.forced)
        data["repeated"] = repeated
        data["message_count"] = len(step.request.messages)
        data["new_messages"] = redacted(
            [m.model_dump(mode="json") for m in step.request.messages[repeated:]]
        )
        run["steps"].append(data)
        previous = step
    final = record.steps[-1].request.model_dump(mode="json") if record.steps else None
    return {
        "run": run,
        "attempts": attempt_groups(run["steps"]),
        "final_request": redacted(final),
        "streamed": streamed_answers(run["steps"]),
        "termination_text": termination_text(record),
        "app_version": __version__,
        "export_version": EXPORT_VERSION,
    }


def repeated_messages(previous: Step | None, step: Step) -> int:
    """How many leading messages of ``step``'s request are exactly the previous request's
    messages (all of them, or 0). Each request repeats the whole history, so the page shows only
    what is new and names the step it continues — linear in turn length, not quadratic."""
    if previous is None:
        return 0
    before, now = previous.request.messages, step.request.messages
    n = len(before)
    return n if 0 < n <= len(now) and common_prefix(before, now) == n else 0


def attempt_groups(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive steps of one attempt, with how the attempt ended: ``kept`` (its answer stands
    or it was the last), ``rejected`` (a failed candidate, cleared or not)."""
    groups = []
    for attempt, members in groupby(steps, key=lambda s: s["attempt"]):
        listed = list(members)
        last = listed[-1]
        rejected = (
            last["status"] in ("failed_validation", "validator_error", "empty") or last["cleared"]
        )
        groups.append(
            {"attempt": attempt, "steps": listed, "outcome": "rejected" if rejected else "kept"}
        )
    for position, group in enumerate(groups):
        group["last"] = position == len(groups) - 1
    return groups


def streamed_answers(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every answer a streaming UI put on screen (text, a refusal, or a final-answer tool's
    arguments), and whether it was cleared afterwards. Tool-call work is not an answer."""
    shown = []
    for step in steps:
        response = step["response"]
        if response is None:
            continue
        text = response["text"] or response["refusal"] or ""
        if not text and step["internal_tool"]:
            text = "\n".join(_json(c["arguments"], indent=None) for c in response["tool_calls"])
        if text:
            shown.append(
                {
                    "index": step["index"],
                    "attempt": step["attempt"],
                    "text": text,
                    "cleared": step["cleared"],
                }
            )
    return shown


def termination_text(record: RunRecord) -> str:
    return why_ended(record.termination, record.fallback_trigger)


def _json(value: Any, indent: int | None = 2) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def _show(value: Any) -> str:
    return "—" if value is None else _json(value, indent=2)


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("inspector.reports", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["json_pretty"] = lambda v: _json(v, indent=2)
    env.filters["json_inline"] = lambda v: json.dumps(v, ensure_ascii=False, default=str)
    env.filters["ms"] = _ms
    env.filters["show"] = _show
    return env
