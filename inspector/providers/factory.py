"""Builds the provider a scenario names. The only place that maps ``[model].provider`` to code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.errors import ScenarioError
from inspector.core.output import scenario_plan
from inspector.core.provider import Provider
from inspector.core.scenario import Scenario
from inspector.providers.scripted import ScriptedProvider

if TYPE_CHECKING:
    import httpx

    from inspector.providers.http import KeyringGet


def build_provider(
    scenario: Scenario,
    *,
    client: httpx.AsyncClient | None = None,
    keyring_get: KeyringGet | None = None,
) -> Provider:
    """``client``: an HTTP client shared by many providers (a sweep's runs); the provider then
    leaves closing it to the caller. ``keyring_get``: a shared key lookup (``pool``)."""
    kind = scenario.model.provider
    if kind == "scripted":
        plan = scenario_plan(scenario)
        mode = plan.mode if plan.mode != "text" else None
        return ScriptedProvider(
            scenario.script,
            final_tool=plan.final_tool_name,
            output_mode=mode,
            seed=scenario.model.seed,
        )
    # The HTTP providers are imported here so scripted runs never load httpx.
    if kind == "openai":
        from inspector.providers.openai import OpenAIProvider

        return OpenAIProvider(scenario.model, client=client, keyring_get=keyring_get)
    if kind == "anthropic":
        from inspector.providers.anthropic import AnthropicProvider

        return AnthropicProvider(scenario.model, client=client, keyring_get=keyring_get)
    raise ScenarioError(
        f"{scenario.source}: model.provider: {kind!r} is not available in this build yet "
        "(only 'scripted', 'openai' and 'anthropic' are)"
    )
