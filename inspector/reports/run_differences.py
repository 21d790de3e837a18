"""What sets a run apart from the scenario as written: its ``--set`` overrides and the run it
replays, in one short line. ``agent-inspector runs`` prints it and the window's runs list shows
it, so two runs of one scenario under different policies never look identical."""

from __future__ import annotations

from collections.abc import Sequence

# Sections whose name adds nothing in a list of runs of one scenario: "policy.max_attempts=1"
# reads as "max_attempts=1". Any other section keeps its name ("model.name=gpt-4o").
_IMPLIED = ("policy.",)


def override_text(override: str) -> str:
    """``policy.max_attempts=1`` → ``max_attempts=1``; others unchanged."""
    for prefix in _IMPLIED:
        if override.startswith(prefix):
            return override[len(prefix) :]
    return override


def differences(overrides: Sequence[str], replay_of: str | None) -> str:
    """``max_attempts=1, feedback_history=none · replay of 3f2a…``; "" for a run of the
    scenario as written."""
    parts = []
    if overrides:
        parts.append(", ".join(override_text(o) for o in overrides))
    if replay_of:
        parts.append(f"replay of {replay_of}")
    return " · ".join(parts)
