"""Provider presets for the policy panel's model fields: the scenario's own model, the local
llama.cpp server (``agent-inspector local-model start``), Ollama, OpenAI and Anthropic.

A preset fills ``model.provider``, ``name``, ``base_url`` and ``api_key_env``; the panel turns
the difference from the scenario into ``--set model.*`` overrides. A preset field left None
keeps the scenario's own value (an override cannot clear a field). Pure: no Qt.
"""

from __future__ import annotations

from typing import Any, NamedTuple

LOCAL_MODEL_URL = "http://127.0.0.1:8642/v1"
LOCAL_PROFILE = "#server=llama.cpp"  # picks the adapter's llama.cpp profile; never sent
PRESET_FIELDS = ("provider", "name", "base_url", "api_key_env")


class ProviderPreset(NamedTuple):
    key: str  # stable id: "scenario", "local", "ollama", "openai", "anthropic"
    label: str
    provider: str | None = None  # None: the scenario's own value
    name: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None


def local_preset(url: str | None = None) -> ProviderPreset:
    """The local llama.cpp server at ``url`` (the running one's), else at the default port."""
    label = f"Local llama.cpp (running at {url})" if url else "Local llama.cpp"
    base = (url or LOCAL_MODEL_URL).split("#", 1)[0] + LOCAL_PROFILE
    return ProviderPreset("local", label, "openai", "gemma-3-270m", base)


def presets(local_url: str | None = None) -> list[ProviderPreset]:
    """The presets offered, in menu order; ``local_url`` is the running local server's."""
    return [
        ProviderPreset("scenario", "Scenario's own model"),
        local_preset(local_url),
        ProviderPreset("ollama", "Ollama", "openai", "llama3.2", "http://127.0.0.1:11434/v1"),
        ProviderPreset(
            "openai",
            "OpenAI",
            "openai",
            "gpt-4o-mini",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
        ),
        ProviderPreset(
            "anthropic",
            "Anthropic",
            "anthropic",
            "claude-haiku-4-5",
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
        ),
    ]


def preset_values(preset: ProviderPreset, scenario_model: dict[str, Any]) -> dict[str, Any]:
    """The model fields ``preset`` sets: its own values, the scenario's where it has none."""
    own = preset._asdict()
    return {
        name: own[name] if own[name] is not None else scenario_model.get(name)
        for name in PRESET_FIELDS
    }


def matching_preset(
    candidates: list[ProviderPreset], scenario_model: dict[str, Any], values: dict[str, Any]
) -> ProviderPreset | None:
    """The preset whose fields ``values`` has (the scenario's own first), or None."""
    for preset in candidates:
        wanted = preset_values(preset, scenario_model)
        if all(values.get(name) == wanted[name] for name in PRESET_FIELDS):
            return preset
    return None
