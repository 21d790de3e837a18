"""Writes one benchmark's section of ``bench/RESULTS.md``, keeping every other section."""

from __future__ import annotations

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
