"""Which libraries Qt's desktop platform plugin misses, and the one line the gui command says."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from inspector import cli, desktop_libraries
from inspector.desktop_libraries import (
    debian_package,
    missing_libraries_message,
    missing_xcb_libraries,
    not_found,
    uses_xcb,
)

# What `ldd libqxcb.so` printed on a Debian 12 machine with two of the libraries missing.
LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffd4e5f1000)
\tlibQt6XcbQpa.so.6 => /x/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f1b2c000000)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f1b2bff0000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb-icccm.so.4 => not found
"""


def test_not_found_lists_each_missing_soname_once_in_order() -> None:
    assert not_found(LDD_OUTPUT) == [
        "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1",
        "libxkbcommon-x11.so.0",
    ]
    assert not_found("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n") == []


@pytest.mark.parametrize(
    ("soname", "package"),
    [
        ("libxcb-icccm.so.4", "libxcb-icccm4"),
        ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
        ("libxcb-render-util.so.0", "libxcb-render-util0"),
        ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
        ("libX11-xcb.so.1", "libX11-xcb1"),
        ("weird", "weird"),
    ],
)
def test_debian_package_follows_the_soname_rule(soname: str, package: str) -> None:
    assert debian_package(soname) == package


@pytest.mark.parametrize(
    ("environ", "xcb"),
    [
        ({"DISPLAY": ":0"}, True),
        ({}, False),
        ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
        ({"QT_QPA_PLATFORM": "xcb"}, True),
        ({"QT_QPA_PLATFORM": "xcb:nograb"}, True),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, False),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, True),
    ],
)
def test_uses_xcb(environ: dict[str, str], xcb: bool) -> None:
    assert uses_xcb(environ) is xcb


def test_missing_xcb_libraries_asks_ldd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "ldd"
    fake.write_text(f"#!/bin/sh\ncat <<'END'\n{LDD_OUTPUT}END\n", encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert missing_xcb_libraries() == ["libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0"]


def test_without_ldd_nothing_is_claimed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(desktop_libraries.shutil, "which", lambda _name: None)
    assert missing_xcb_libraries() == []


def test_gui_says_what_is_missing_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setattr(
        desktop_libraries, "missing_xcb_libraries", lambda: ["libxcb-icccm4", "libxcb-keysyms1"]
    )
    assert cli.main(["gui"], out=io.StringIO()) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("agent-inspector: error: the desktop window needs system libraries")
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in err
    assert (
        err
        == "agent-inspector: error: "
        + missing_libraries_message(["libxcb-icccm4", "libxcb-keysyms1"])
        + "\n"
    )
