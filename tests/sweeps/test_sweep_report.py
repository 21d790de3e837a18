"""A sweep's report from its runs: which run counts, rates, baseline, cost, Pareto front."""

from __future__ import annotations

import pytest
from genai_prices import Usage, calc_price

from inspector.sweeps.cost import run_cost
from inspector.sweeps.model import Arm, RunFacts, SweepSpec
from inspector.sweeps.render import format_csv, format_html, format_text
from inspector.sweeps.report import build_report


def spec(repeat: int = 4, baseline: str = "a") -> SweepSpec:
    arms = [Arm(name="a", overrides=["policy.max_attempts=1"]), Arm(name="b")]
    return SweepSpec(
        scenario="demo:x", arms=arms, repeat=repeat, seed=1, baseline=baseline, concurrency=2
    )


def fact(arm: int, rep: int, status: str, *, model: str = "gpt-4o-mini", **kw: object) -> RunFacts:
    termination = {"succeeded": "stop", "failed": "validator_exhausted"}.get(status, "cancelled")
    return RunFacts.model_validate(
        {
            "arm": arm,
            "rep": rep,
            "run_id": f"r{arm}{rep}{status[:2]}",
            "status": status,
            "termination": termination,
            "model": model,
            "provider": "scripted",
            "input_tokens": 100,
            "output_tokens": 10,
            "attempts_used": 1,
            **kw,
        }
    )


def test_each_repetition_counts_once_and_cut_short_runs_are_missing() -> None:
    facts = [
        fact(0, 0, "succeeded"),
        fact(0, 1, "cancelled"),  # then re-run by --resume:
        fact(0, 1, "failed"),
        fact(0, 2, "succeeded"),
        fact(0, 3, "interrupted"),  # never finished: missing
        fact(1, 0, "failed"),
        fact(1, 1, "failed"),
        fact(1, 2, "succeeded"),
        fact(1, 3, "failed"),
    ]
    report = build_report("swx", "t", spec(), facts)
    a, b = report.arms
    assert (a.runs, a.missing, a.passed, a.pass_rate) == (3, 1, 2, pytest.approx(2 / 3))
    assert a.terminations == {"stop": 2, "validator_exhausted": 1}
    assert a.rates == {"fallback": 0.0, "failed": pytest.approx(1 / 3), "error": 0.0}
    assert (b.runs, b.passed) == (4, 1)
    assert report.runs == 7 and report.expected == 8
    assert a.versus_baseline is None  # a is the baseline
    assert b.versus_baseline is not None
    assert b.versus_baseline.difference == pytest.approx(1 / 4 - 2 / 3)
    # Fisher on [[1, 3], [2, 1]]: tables with a=0..3 have probabilities 1/35·(1, 12, 18, 4);
    # the observed (a=1, 12/35) and every less likely one (1/35, 4/35) -> 17/35.
    assert b.versus_baseline.p_value == pytest.approx(17 / 35)


def test_cost_comes_from_the_price_table() -> None:
    facts = [fact(0, r, "succeeded" if r < 2 else "failed") for r in range(4)]
    report = build_report("swx", "t", spec(), facts)
    one = float(calc_price(Usage(input_tokens=100, output_tokens=10), "gpt-4o-mini").total_price)
    cost = report.arms[0].cost
    assert cost.per_run == pytest.approx(one)
    assert cost.total == pytest.approx(4 * one)
    assert cost.per_accepted == pytest.approx(2 * one)  # 4 runs' cost over 2 accepted answers


def test_an_unknown_model_costs_unknown_never_zero() -> None:
    facts = [fact(0, 0, "succeeded", model="demo"), fact(1, 0, "succeeded")]
    report = build_report("swx", "t", spec(repeat=1), facts)
    a, b = report.arms
    assert a.cost.per_run is None and a.cost.per_accepted is None and a.cost.total is None
    assert "no price for model 'demo'" in a.cost.note
    assert b.cost.per_run is not None and b.cost.per_run > 0
    assert report.pareto_axis == "tokens"  # costs cannot be compared: tokens stand in
    text = format_text(report)
    assert "unknown" in text and "$0.000000" not in text
    row = format_csv(report).splitlines()[1].split(",")
    assert row[-4:-2] == ["unknown", "unknown"]
    assert "unknown" in format_html(report)


def test_pareto_front_and_baseline_by_name() -> None:
    # a passes 2/2 for 100+10 tokens per run; b passes 1/2 at the same cost: a dominates b.
    facts = [fact(0, 0, "succeeded"), fact(0, 1, "succeeded")]
    facts += [fact(1, 0, "succeeded"), fact(1, 1, "failed")]
    report = build_report("swx", "t", spec(repeat=2, baseline="b"), facts)
    a, b = report.arms
    assert report.baseline == "b" and b.versus_baseline is None
    assert a.versus_baseline is not None and a.versus_baseline.difference == pytest.approx(0.5)
    assert (a.pareto, b.pareto) == (True, False)
    assert "pareto front (cost per run vs pass rate): a" in format_text(report)


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("gpt-4o-mini", "openai"),
        ("gpt-4o-mini", "scripted"),
        ("claude-3-5-haiku-latest", "anthropic"),
        ("gemini-1.5-pro", "scripted"),  # tiered: priced by calc_price itself
    ],
)
def test_run_cost_is_the_price_tables(model: str, provider: str) -> None:
    provider_id = {"openai": "openai", "anthropic": "anthropic"}.get(provider)
    for tokens_in, tokens_out in [(0, 0), (123, 45), (250_000, 9_000), (1_000_000, 1)]:
        usage = Usage(input_tokens=tokens_in, output_tokens=tokens_out)
        kw = {"provider_id": provider_id} if provider_id else {}
        expected = float(calc_price(usage, model, **kw).total_price)
        assert run_cost(model, provider, tokens_in, tokens_out) == pytest.approx(expected)
    assert run_cost("no-such-model-anywhere", provider, 10, 10) is None
