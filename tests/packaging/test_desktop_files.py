"""Linux desktop integration files and platform icons (fast; no bundle needed)."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import inspector

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
DESKTOP = LINUX / "agent-inspector.desktop"
METAINFO = next(LINUX.glob("*.metainfo.xml"))
HICOLOR = LINUX / "icons" / "hicolor"
PNG_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_launches_the_app_with_its_icon() -> None:
    entry = _desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "agent-inspector"  # the console script / bundle binary
    assert entry["Icon"] == "agent-inspector"
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")


def test_metainfo_names_the_desktop_file_and_the_current_version() -> None:
    component = ET.parse(METAINFO).getroot()
    component_id = component.findtext("id")
    assert METAINFO.name == f"{component_id}.metainfo.xml"
    assert component.findtext("launchable") == DESKTOP.name
    assert component.findtext("project_license") == "MIT"
    releases = [r.get("version") for r in component.iter("release")]
    assert releases[0] == inspector.__version__, "add a <release> for the new version"
    assert component.findtext("provides/binary") == "agent-inspector"


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli not installed")
def test_metainfo_validates_with_appstreamcli() -> None:
    result = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(METAINFO)],
        capture_output=True, text=True, check=False, timeout=30,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="no desktop-file-utils")
def test_desktop_file_validates() -> None:
    result = subprocess.run(
        ["desktop-file-validate", str(DESKTOP)],
        capture_output=True, text=True, check=False, timeout=30,
    )  # fmt: skip
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout


@pytest.mark.parametrize("size", PNG_SIZES)
def test_hicolor_png_icons_have_their_size(size: int) -> None:
    assert _png_size(HICOLOR / f"{size}x{size}" / "apps" / "agent-inspector.png") == (size, size)


def test_scalable_icon_is_the_window_icon() -> None:
    scalable = HICOLOR / "scalable" / "apps" / "agent-inspector.svg"
    source = ROOT / "resources" / "icons" / "agent-inspector.svg"
    assert scalable.read_bytes() == source.read_bytes(), "run packaging/render_icons.py"


def test_windows_ico_holds_png_entries_up_to_256() -> None:
    data = (ROOT / "packaging" / "icons" / "agent-inspector.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1) and count >= 5
    sides = []
    for i in range(count):
        side, _, _, _, _, _, length, offset = struct.unpack("<BBBBHHII", data[6 + 16 * i :][:16])
        png = data[offset : offset + length]
        assert png[:4] == b"\x89PNG"
        sides.append(side or 256)
    assert {16, 32, 48, 256} <= set(sides)


def test_macos_icns_entries_are_consistent() -> None:
    data = (ROOT / "packaging" / "icons" / "agent-inspector.icns").read_bytes()
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    offset, kinds = 8, []
    while offset < len(data):
        kind, length = (
            data[offset : offset + 4],
            struct.unpack(">I", data[offset + 4 : offset + 8])[0],
        )
        assert data[offset + 8 : offset + 12] == b"\x89PNG"
        kinds.append(kind)
        offset += length
    assert offset == len(data)
    assert {b"icp4", b"ic07", b"ic08", b"ic10"} <= set(kinds)
