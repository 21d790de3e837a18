"""What tells a sweep's id from a run's: a module of its own, so that a command taking either
(``export``) need not import the sweep machinery to tell them apart."""

from __future__ import annotations

SWEEP_PREFIX = "sw"  # "s" and "w" are no hex digits: a sweep id never prefixes a run id


def is_sweep_id(text: str) -> bool:
    return text.startswith(SWEEP_PREFIX)
