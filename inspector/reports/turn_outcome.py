"""What the outcome header above the timeline says about a turn: what its user got (the
answer, the fallback value or the error), how the turn ended in words, the attempts and steps
against their budgets, the tokens and the cost. Qt-free: the window's ``OutcomeHeader`` shows
it, tests read it directly.

``turn_outcome`` costs O(1) for a run still streaming (its last step and the budgets of its
``RunStarted``; the tokens so far are the caller's running sum), so a live header can be
redrawn every few tens of milliseconds whatever the run's length."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Usage
from inspector.reports.labels import ending, step_budget, value_text, words

AnswerKind = Literal["output", "fallback", "error", "none", "running", "empty"]
ANSWER_CHARS = 200_000  # an answer longer than this is cut (the record keeps it all)


class _NotPriced:
    """The cost has not been looked up yet (the price table loads off the UI thread)."""

    def __repr__(self) -> str:
        return "NOT_PRICED"


NOT_PRICED: Final = _NotPriced()
Cost = float | None | _NotPriced


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    status: str  # the run's status; "running" while it streams, "" with no run
    headline: str  # the status in words: "succeeded", "fallback", "running"
    ended: str  # how the turn ended, a sentence
    answer_kind: AnswerKind
    answer_label: str  # what ``answer`` is: "Answer", "Fallback value", "Error", ...
    answer: str  # in full (JSON indented for a structured value); "" when there is none
    facts: tuple[str, ...]  # "attempt 3 of 3", "4 steps of 8 max", tokens, cost
    answer_brief: str = ""  # the answer on as few lines as it takes (JSON compact), to wrap

    @property
    def facts_line(self) -> str:
        return " · ".join(self.facts)


EMPTY = TurnOutcome("", "", "", "none", "", "", ())


def turn_outcome(run: LiveRun, usage: Usage | None = None, cost: Cost = NOT_PRICED) -> TurnOutcome:
    """The header of ``run``: finished (its record) or streaming (``usage``: its tokens so far,
    else none are shown). ``cost`` in US dollars, None when the price is not known."""
    record = run.record
    if record is not None:
        return _finished(record, cost)
    header = run.header
    if header is None and not run.steps:
        return EMPTY
    facts: list[str] = []
    last = run.steps[-1] if run.steps else None
    # A proxied run's policy capped nothing (as for its record, below): no budgets to count.
    policy = header.policy if header is not None and header.via is None else None
    if last is not None:
        of = f" of {policy.max_attempts}" if policy is not None else ""
        facts.append(f"attempt {last.attempt}{of}")
    facts.append(step_budget(len(run.steps), policy.max_steps if policy is not None else None))
    if usage is not None:
        facts.append(f"{tokens(usage)} so far")
    if run.fallback is not None:
        return TurnOutcome(
            "running", "running", "A fallback value replaces the model's answer; ending…",
            "fallback", "Fallback value", _text(run.fallback), tuple(facts),
            _text(run.fallback, indent=None),
        )  # fmt: skip
    doing = f"step {last.index} of attempt {last.attempt}" if last is not None else "starting"
    return TurnOutcome(
        "running", "running", f"Running: {doing}.", "running", "Answer",
        "", tuple(facts),
    )  # fmt: skip


def _finished(record: RunRecord, cost: Cost) -> TurnOutcome:
    budgets = record.budgets
    if record.via is None and record.fidelity is None:
        facts = [
            f"attempt {budgets.attempts_used} of {budgets.max_attempts}",
            step_budget(budgets.steps_used, budgets.max_steps),
        ]
    else:  # proxied or imported: no policy capped it, the budgets are what was used
        facts = [f"attempt {budgets.attempts_used}", step_budget(budgets.steps_used, None)]
    facts.append(tokens(record.usage))
    facts.append(cost_words(cost))
    status = record.status
    ended = ending(status, record.termination, record.fallback_trigger)
    rejected = budgets.attempts_used - 1
    last = record.steps[-1] if record.steps else None
    if status == "succeeded" and record.termination == "stop":
        if rejected > 0:
            ended = (
                f"The model's answer was accepted on attempt {budgets.attempts_used}, after "
                f"{rejected} rejected attempt{'s' * (rejected != 1)}."
            )
        if last is not None and last.forced is not None and last.forced.tool_choice == "none":
            ended = ended.removesuffix(".") + (
                f" — on the last step the step cap allows ({budgets.steps_used} of "
                f"{budgets.max_steps}), forced to answer without tools."
            )
    kind, label, answer = _answer(record)
    brief = _text(record.output, indent=None) if kind in ("output", "fallback") else answer
    return TurnOutcome(status, words(status), ended, kind, label, answer, tuple(facts), brief)


def _answer(record: RunRecord) -> tuple[AnswerKind, str, str]:
    if record.status == "fallback":
        return "fallback", "Fallback value", _text(record.output)
    if record.status == "succeeded":
        if record.output is None or record.output == "":
            return "empty", "Answer", "(an empty answer)"
        return "output", "Answer", _text(record.output)
    if record.error is not None:
        return "error", "Error", f"{record.error.type}: {record.error.message}"
    return "none", "No answer", ""


def tokens(usage: Usage) -> str:
    return f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"


def cost_words(cost: Cost) -> str:
    """``$0.000412``; ``cost unknown`` when the price table does not know the model (never
    a made-up $0); ``cost …`` while it is looked up."""
    if isinstance(cost, _NotPriced):
        return "cost …"
    if cost is None:
        return "cost unknown"
    return f"${cost:.6f}" if cost < 0.01 else f"${cost:.4f}"


def _text(value: Any, indent: int | None = 2) -> str:
    return value_text(value, indent)[:ANSWER_CHARS]
