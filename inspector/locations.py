"""Every user path the inspector reads or writes, and the environment variable overriding each.

Nothing here touches the disk: a folder is created only by whoever first writes into it. The rules
(which variable wins over which default) are in ``docs/architecture.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "agent-inspector"

ENV_VAR = "AGENT_INSPECTOR_DB"  # the store file
DEFAULT_FILE = "runs.sqlite3"
PRESETS_ENV = "AGENT_INSPECTOR_PRESETS"  # the folder of user policy presets
LOCAL_MODEL_DIR_ENV = "AGENT_INSPECTOR_LOCAL_MODEL_DIR"  # the local model, its state file and log
LOCAL_MODEL_ENV = "AGENT_INSPECTOR_LOCAL_MODEL"  # another .gguf to serve instead
PROXY_SETTINGS_ENV = "AGENT_INSPECTOR_PROXY_SETTINGS"  # the window's proxy port and upstreams
SCENARIOS_ENV = "AGENT_INSPECTOR_SCENARIOS"  # the folder "Edit a copy" puts demo copies in
WINDOW_STATE_ENV = "AGENT_INSPECTOR_WINDOW_STATE"  # the window's layout and recent scenarios


def _override(name: str) -> Path | None:
    value = os.environ.get(name, "")
    return Path(value).expanduser() if value else None


def user_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def default_db_path() -> Path:
    """The per-user store (not created here: nothing touches the disk until a store is opened)."""
    return user_data_dir() / DEFAULT_FILE


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``explicit`` (``--db``) wins, then ``$AGENT_INSPECTOR_DB``, then the user data dir."""
    if explicit is not None and str(explicit) != "":
        return Path(explicit).expanduser()
    return _override(ENV_VAR) or default_db_path()


def db_path_named_by(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """What named the store ``resolve_db_path(explicit)`` gives: ``--db``, the environment
    variable, or None for the default (a store a fresh machine does not have yet)."""
    if explicit is not None and str(explicit) != "":
        return "--db"
    return ENV_VAR if _override(ENV_VAR) else None


def presets_dir() -> Path:
    """Where user policy presets are saved (only saving creates it)."""
    return _override(PRESETS_ENV) or user_config_dir() / "presets"


def user_scenarios_dir() -> Path:
    """Where copies of demos are made for editing (only copying creates it)."""
    return _override(SCENARIOS_ENV) or user_data_dir() / "scenarios"


def local_model_home() -> Path:
    """The folder holding the local model, its server's state file and log."""
    return _override(LOCAL_MODEL_DIR_ENV) or user_data_dir()


def local_model_file(home: Path, file_name: str) -> Path:
    """The ``.gguf`` to serve: ``$AGENT_INSPECTOR_LOCAL_MODEL``, else ``home/models/file_name``."""
    return _override(LOCAL_MODEL_ENV) or home / "models" / file_name


def proxy_settings_file() -> Path:
    """The window's recording proxy settings (port, upstreams; never a key)."""
    return _override(PROXY_SETTINGS_ENV) or user_config_dir() / "proxy.json"


def window_state_file() -> Path:
    """The window's saved layout (geometry, docks, view choices) and recent scenario files."""
    return _override(WINDOW_STATE_ENV) or user_config_dir() / "window.ini"
