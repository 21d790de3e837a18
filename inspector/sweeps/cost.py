"""What a run cost, from the ``genai-prices`` package's price table (bundled with it; no network).

A model the table does not know costs ``None`` — shown as "unknown", never as 0. Runs are priced
on their total tokens per model; a model whose price has tiers by prompt length is priced at the
tier of the run's total (close for sweeps' short turns; see docs/sweeps.md).
"""

from __future__ import annotations

from functools import lru_cache

# Our provider names as genai-prices knows them; the scripted model has none (its model name
# alone is looked up, so a scripted demo can be priced as the model it stands in for).
_PROVIDER_IDS = {"openai": "openai", "anthropic": "anthropic"}


def run_cost(model: str, provider: str, input_tokens: int, output_tokens: int) -> float | None:
    """US dollars for one run's tokens, or None when the price table has no such model."""
    return price(model, _PROVIDER_IDS.get(provider), input_tokens, output_tokens)


@lru_cache(maxsize=65536)
def price(
    model: str, provider_id: str | None, input_tokens: int, output_tokens: int
) -> float | None:
    if not model:
        return None
    from genai_prices import Usage, calc_price  # its table loads on first use (~0.2 s)

    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    try:
        if provider_id is not None:
            try:
                return float(calc_price(usage, model, provider_id=provider_id).total_price)
            except LookupError:
                pass  # a compatible server under another provider's name: try the model alone
        return float(calc_price(usage, model).total_price)
    except LookupError:
        return None
