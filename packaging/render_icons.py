"""Renders the app icon (resources/icons/agent-inspector.svg) for desktop integration.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icons.py

Writes, from the one SVG the window uses:
- packaging/linux/icons/hicolor/<N>x<N>/apps/agent-inspector.png and scalable/…/.svg (freedesktop
  icon theme layout, copied as is into ~/.local/share/icons or /usr/share/icons);
- packaging/icons/agent-inspector.ico (Windows: PNG-compressed entries, 16–256 px) and
  agent-inspector.icns (macOS: PNG entries, 16–1024 px), used by the PyInstaller spec.
The outputs are checked in; run this again only when the SVG changes.
"""

from __future__ import annotations

import shutil
import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "resources" / "icons" / "agent-inspector.svg"
HICOLOR = ROOT / "packaging" / "linux" / "icons" / "hicolor"
PLATFORM_ICONS = ROOT / "packaging" / "icons"
NAME = "agent-inspector"
LINUX_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS entry types holding PNG data, by pixel size.
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09",
              1024: b"ic10"}  # fmt: skip


def render_png(renderer: QSvgRenderer, size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError(f"cannot encode a {size}px PNG")
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are PNGs (Windows Vista and later read these)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, images = b"", b""
    for size, png in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        images += png
        offset += len(png)
    return header + entries + images


def icns(pngs: dict[int, bytes]) -> bytes:
    body = b"".join(
        ICNS_TYPES[size] + struct.pack(">I", 8 + len(png)) + png
        for size, png in sorted(pngs.items())
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    _app = QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        print(f"render_icons: cannot read {SOURCE}", file=sys.stderr)
        return 1
    sizes = sorted({*LINUX_SIZES, *ICO_SIZES, *ICNS_TYPES})
    pngs = {size: render_png(renderer, size) for size in sizes}
    for size in LINUX_SIZES:
        folder = HICOLOR / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{NAME}.png").write_bytes(pngs[size])
    scalable = HICOLOR / "scalable" / "apps"
    scalable.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, scalable / f"{NAME}.svg")
    PLATFORM_ICONS.mkdir(parents=True, exist_ok=True)
    (PLATFORM_ICONS / f"{NAME}.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    (PLATFORM_ICONS / f"{NAME}.icns").write_bytes(icns({s: pngs[s] for s in ICNS_TYPES}))
    print(f"render_icons: {len(LINUX_SIZES)} PNGs + SVG in {HICOLOR}, .ico and .icns in "
          f"{PLATFORM_ICONS}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
