"""The port and upstreams the window's proxy starts with, remembered between sessions in the
user config (``locations.proxy_settings_file``). Keys are never here: the proxy reads them from
the environment as the command does."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from inspector.locations import proxy_settings_file
from inspector.proxy.upstream import ANTHROPIC_UPSTREAM, OPENAI_UPSTREAM

__all__ = ["ProxySettings", "check_settings", "load_settings", "save_settings"]


class ProxySettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    port: int = 8765
    upstream: str = OPENAI_UPSTREAM
    upstream_anthropic: str = ANTHROPIC_UPSTREAM


def check_settings(settings: ProxySettings) -> str | None:
    """What is wrong with ``settings``, in one line, or None."""
    if not 0 <= settings.port <= 65535:
        return f"port {settings.port}: expected 0-65535"
    for name, url in (
        ("upstream", settings.upstream),
        ("Anthropic upstream", settings.upstream_anthropic),
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return f"{name} {url!r}: expected an http:// or https:// URL"
    return None


def load_settings(path: Path | None = None) -> ProxySettings:
    """The saved settings; the defaults when there are none or the file is unreadable."""
    path = path or proxy_settings_file()
    try:
        return ProxySettings.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return ProxySettings()


def save_settings(settings: ProxySettings, path: Path | None = None) -> None:
    path = path or proxy_settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings.model_dump(), indent=2) + "\n", encoding="utf-8")
