"""Writes one benchmark's section of ``bench/RESULTS.md``, keeping every other section."""

from __future__ import annotations

import platform
import re
from pathlib import Path


def write_section(path: Path, heading: str, text: str) -> None:
    """Replace the section that starts with ``heading`` (a ``## ...`` line) or append it.

    ``text`` must start with ``heading``. Sections end at the next ``## `` heading."""
    assert text.startswith(heading), "a section's text starts with its own heading"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(old):
        new = pattern.sub(lambda _: text.rstrip("\n") + "\n\n", old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def cpu_model() -> str:
    """The CPU's model name for a results header ("unknown" where /proc/cpuinfo is missing)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return platform.processor() or "unknown"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else "unknown"
