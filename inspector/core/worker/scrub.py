"""Secrets out of what user code printed or raised: the values of the environment's
credential-looking variables (``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``...) are
replaced before the text reaches a record, the store or the screen. User code can read the
environment (a tool may need its own key), so a debug ``print(os.environ)`` must not leak.
Pure; the pool applies it to every reply."""

from __future__ import annotations

import re
from collections.abc import Mapping

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL|COOKIE", re.IGNORECASE)
_MIN_LENGTH = 8  # shorter values ("1", "true") would blank out ordinary text


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values to hide, longest first (so a key that contains another is hidden whole)."""
    values = {
        value
        for name, value in environ.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text
