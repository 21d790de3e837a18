"""Scenario files the tests write: any TOML body, or a turn whose answer streams slowly enough
to stop."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_scenario(folder: Path, body: str, name: str = "scenario.toml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def streaming_scenario(folder: Path, *, words: int = 40, delay_ms: int = 20) -> Path:
    """A plain-text turn whose one answer streams word by word, slowly enough to stop."""
    text = " ".join(f"word{i}" for i in range(words))
    return write_scenario(
        folder,
        f"""
        name = "slow-stream"
        [model]
        provider = "scripted"
        [prompt]
        user = "Say many words."
        [[validators]]
        kind = "max_length"
        max = 20
        feedback = "Shorter."
        [policy]
        max_attempts = 3
        [[script]]
        text = "{text}"
        delay_ms = {delay_ms}
        [[script]]
        text = "short"
        delay_ms = {delay_ms}
        [[script]]
        text = "tiny"
        """,
        "slow-stream.toml",
    )
