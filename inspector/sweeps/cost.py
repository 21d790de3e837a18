"""What a run cost, from the ``genai-prices`` package's price table (bundled with it; no network).

A model the table does not know costs ``None`` — shown as "unknown", never as 0. Runs are priced
on their total tokens per model; a model whose price has tiers by prompt length is priced at the
tier of the run's total (close for sweeps' short turns; see docs/sweeps.md).

A flat price (a dollar figure per million input and output tokens, no tiers, no per-request fee)
is looked up once per model and applied by arithmetic: ``calc_price`` costs ~0.1 ms a call, which
for 10,000 runs of distinct token counts was over a second of a report's time.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any

# Our provider names as genai-prices knows them; the scripted model has none (its model name
# alone is looked up, so a scripted demo can be priced as the model it stands in for).
_PROVIDER_IDS = {"openai": "openai", "anthropic": "anthropic"}
_MILLION = 1_000_000


def run_cost(model: str, provider: str, input_tokens: int, output_tokens: int) -> float | None:
    """US dollars for one run's tokens, or None when the price table has no such model."""
    provider_id = _PROVIDER_IDS.get(provider)
    rates = flat_rates(model, provider_id)
    if isinstance(rates, tuple):
        per_input, per_output = rates
        return (input_tokens * per_input + output_tokens * per_output) / _MILLION
    if rates is None:
        return None
    return price(model, provider_id, input_tokens, output_tokens)  # tiers or a per-request fee


@lru_cache(maxsize=256)
def flat_rates(model: str, provider_id: str | None) -> tuple[float, float] | str | None:
    """(dollars per million input tokens, per million output tokens); "varies" for a price with
    tiers or a per-request fee; None for a model the table does not know."""
    found = _calculation(model, provider_id, 1, 1)
    if found is None:
        return None
    prices = found.model_price
    parts: dict[str, Any] = {"input": getattr(prices, "input_mtok", None)}
    parts["output"] = getattr(prices, "output_mtok", None)
    fee = getattr(prices, "requests_kcount", None)
    if fee or not all(v is None or isinstance(v, Decimal) for v in parts.values()):
        return "varies"
    return float(parts["input"] or 0), float(parts["output"] or 0)


@lru_cache(maxsize=65536)
def price(
    model: str, provider_id: str | None, input_tokens: int, output_tokens: int
) -> float | None:
    found = _calculation(model, provider_id, input_tokens, output_tokens)
    return None if found is None else float(found.total_price)


def _calculation(model: str, provider_id: str | None, input_tokens: int, output_tokens: int) -> Any:
    if not model:
        return None
    from genai_prices import Usage, calc_price  # its table loads on first use (~0.2 s)

    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    if provider_id is not None:
        try:
            return calc_price(usage, model, provider_id=provider_id)
        except LookupError:
            pass  # a compatible server under another provider's name: try the model alone
    try:
        return calc_price(usage, model)
    except LookupError:
        return None
