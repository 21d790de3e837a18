"""Which system libraries Qt's desktop (xcb) platform plugin cannot find, asked before Qt loads it.

Without them Qt prints a misleading message (it blames ``libxcb-cursor0`` whichever is missing)
and aborts. Asking ``ldd`` first lets the ``gui`` command say in one line what is missing and how
to install it. No Qt import here: the plugin is found through PySide6's package location.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
_SONAME = re.compile(r"^(?P<name>lib[\w.+-]*?)\.so\.(?P<major>\d+)")


def uses_xcb(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether Qt will pick its xcb platform: asked for, or an X display on Linux with no
    Wayland session to prefer."""
    if sys.platform != "linux":
        return False
    asked = environ.get("QT_QPA_PLATFORM", "")
    if asked:
        return asked.split(":")[0].split(";")[0] == "xcb"
    wayland = environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland"
    return bool(environ.get("DISPLAY")) and not wayland


def xcb_plugin() -> Path | None:
    """PySide6's xcb platform plugin, or None when this PySide6 has none."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        plugin = Path(root) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def not_found(ldd_output: str) -> list[str]:
    """The sonames ``ldd`` could not resolve, each once, in the order it listed them."""
    return list(dict.fromkeys(_NOT_FOUND.findall(ldd_output)))


def debian_package(soname: str) -> str:
    """Debian's package name for a shared library (``libxcb-icccm.so.4`` → ``libxcb-icccm4``,
    ``libxkbcommon-x11.so.0`` → ``libxkbcommon-x11-0``): the soname rule Debian follows."""
    match = _SONAME.match(soname)
    if match is None:
        return soname
    name, major = match["name"], match["major"]
    return f"{name}-{major}" if name[-1].isdigit() else f"{name}{major}"


def missing_xcb_libraries() -> list[str]:
    """The Debian packages the xcb plugin needs and cannot find; empty when all is there or
    when it cannot be told (no plugin, no ``ldd``)."""
    plugin = xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is None or ldd is None:
        return []
    try:
        done = subprocess.run(
            [ldd, str(plugin)], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return list(dict.fromkeys(debian_package(s) for s in not_found(done.stdout)))


def missing_libraries_message(packages: list[str]) -> str:
    names = " ".join(packages)
    return (
        f"the desktop window needs system libraries that are missing: {names}; install them "
        f"with `sudo apt-get install {names}` (or run headless with --screenshot PNG or "
        "--self-test)"
    )
