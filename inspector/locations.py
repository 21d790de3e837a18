"""Where the store lives: ``--db``, else ``$AGENT_INSPECTOR_DB``, else the user data dir."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

ENV_VAR = "AGENT_INSPECTOR_DB"
APP_NAME = "agent-inspector"
DEFAULT_FILE = "runs.sqlite3"


def default_db_path() -> Path:
    """The per-user store (not created here: nothing touches the disk until a store is opened)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / DEFAULT_FILE


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``explicit`` (``--db``) wins, then ``$AGENT_INSPECTOR_DB``, then the user data dir."""
    if explicit is not None and str(explicit) != "":
        return Path(explicit).expanduser()
    from_env = os.environ.get(ENV_VAR, "")
    if from_env:
        return Path(from_env).expanduser()
    return default_db_path()
