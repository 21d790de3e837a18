"""``CellPictures``: what a timeline cell paints, kept as a pixmap and drawn again with one
``drawPixmap`` (~1 µs) instead of painted again (a ``drawText`` lays its text out on every call,
~10–30 µs; a status cell is ~12 calls into Qt, antialiased).

A picture is the cell painted by the very calls the row painter would make (``drawText`` of the
elided text, the delegate's ``paint_status_at`` / ``paint_latency_at``) on a pixmap filled with
the viewport's background, at the target's device pixel ratio, cut to what the cell inked (the
bounding box of the pixels that are not the background, on whole logical pixels): drawn where
the cell is, it gives the pixels painting the cell there gives, provided that

- the device pixel ratio is a whole number and the cell is at whole device pixels (the row
  painter checks both; at a ratio of 1.5 it paints every cell itself);
- what is under the cell's ink is the plain background (the row painter's rows: no selection,
  hover, grid or alternate colour; the viewport's background a solid colour) — the picture is
  opaque, so the glyphs are blended as on the viewport (a subpixel-antialiased desktop's too);
  no other cell inks there unless two cells' texts overlap;
- the cell inks nothing outside itself: a cell that is not clipped to itself (a plain text) is
  painted with 4 px around it and pictured only when its ink stayed inside the cell (a text
  that overflows its cell even elided stays ``drawText``'s).

Pictures depend on what ``begin`` is given (background, device pixel ratio, and a state: text
colours, fonts, palette, render hints): when it changes, they are all dropped. A cell's key says
the rest (its text, width, height, alignment, status...). A key is pictured the second time it
is painted (``wanted``): a text seen once (a step number, an output preview, when scrolling) is
not worth its picture. The cells pictured in a pass are painted on one scratch pixmap, with one
painter (one painter per picture was ~200 µs a picture), cut out of it and drawn where they go
at the end of the pass (``finish``). At most ``MADE_PER_PASS`` a pass (the others in a later
pass), ``KEPT_BYTES`` of pictures and ``KEPT_KEYS`` keys seen; past either of the last two, all
are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap

KEPT_BYTES = 24 << 20  # a few pages of every column's distinct texts, at a ratio of 2
KEPT_KEYS = 8192
PAD = 4  # logical px around a cell where ink that leaves it is looked for
MADE_PER_PASS = 48  # pictures painted in one pass at most (each ~20–40 µs)
SCRATCH_HEIGHT = 640  # logical px of the pass's scratch pixmap the new pictures go on
UNKNOWN = object()  # a default for ``get``: a key with no picture made (yet)
NOT_PICTURED = object()  # ``get``: painted, not pictured (it inks outside its cell)
PENDING = object()  # ``get``: pictured in this pass (``also`` draws it at another place)


# A picture: (x, y) of its top left in the cell (logical px), the pixmap; None: nothing inked.
Picture = tuple[int, int, QPixmap] | None
Paint = Callable[[QPainter], None]


class CellPictures:
    """Pictures of cells by key, for the pass ``begin`` describes."""

    def __init__(self) -> None:
        self._state: Hashable = None
        self._background = QColor()
        self._ratio = 1
        self._width = 0  # the scratch's logical width (the viewport's, padded)
        # key -> its picture; NOT_PICTURED: painted, not pictured; PENDING: on this pass's scratch
        self._pictures: dict[Hashable, object] = {}
        self._seen: set[Hashable] = set()
        self._bytes = 0
        self._scratch: QPixmap | None = None
        self._painter: QPainter | None = None
        self._shelf = (0, 0, 0)  # the scratch's free place: x, y, height of the shelf
        # this pass's new pictures: key -> (its cell on the scratch, padded?, paint, clip,
        # where it goes on the target: [(x, y), ...])
        self._pending: dict[Hashable, tuple[QRect, int, Paint, bool, list[tuple[int, int]]]] = {}
        self.made = 0  # pictures made (tests and benches read it)
        self.get = self._pictures.get  # key, default -> Picture | NOT_PICTURED | PENDING

    def begin(self, state: Hashable, background: QColor, ratio: int, width: int) -> None:
        """A paint pass on ``background`` at device pixel ratio ``ratio`` (a whole number) in a
        viewport ``width`` wide; ``state`` holds everything else the pictures depend on
        (colours, fonts, palette)."""
        if self._painter is not None:  # a pass that did not finish (it raised): dropped
            self._painter.end()
            self._painter = self._scratch = None
            for key in self._pending:
                del self._pictures[key]
            self._pending.clear()
        state = (state, background.rgba(), ratio)
        if state != self._state:
            self.clear()
            self._state = state
            self._background = QColor(background)
            self._ratio = ratio
        self._width = width + 2 * PAD
        self._shelf = (0, 0, 0)

    def clear(self) -> None:
        self._pictures.clear()
        self._seen.clear()
        self._bytes = 0
        self._state = None

    def wanted(self, key: Hashable) -> bool:
        """Whether to picture ``key`` (not pictured yet) now: it has been painted before, and
        this pass has room for it."""
        if key in self._seen:
            return len(self._pending) < MADE_PER_PASS
        if len(self._seen) >= KEPT_KEYS:
            self._seen.clear()
        self._seen.add(key)
        return False

    def add(
        self, key: Hashable, x: int, y: int, width: int, height: int, paint: Paint, clip: bool
    ) -> bool:
        """Paints ``key``'s cell (``width`` × ``height``) on this pass's scratch with ``paint``
        (given a painter whose origin is the cell's top left, clipped to the cell when
        ``clip``); ``finish`` draws it at ``x``, ``y`` on the target. False when the scratch
        is full (then the caller paints the cell)."""
        pad = 0 if clip else PAD  # what is clipped to the cell cannot leave it
        slot_width, slot_height = width + 2 * pad, height + 2 * pad
        left, top, shelf = self._shelf
        if left + slot_width > self._width or slot_height != shelf:  # a new shelf below
            left, top, shelf = 0, top + shelf, slot_height
        if top + slot_height > SCRATCH_HEIGHT or slot_width > self._width:
            return False
        self._shelf = (left + slot_width, top, shelf)
        painter = self._painter
        if painter is None:
            ratio = self._ratio
            scratch = QPixmap(self._width * ratio, SCRATCH_HEIGHT * ratio)
            scratch.setDevicePixelRatio(ratio)  # not filled: each slot is, when taken
            self._scratch = scratch
            painter = self._painter = QPainter(scratch)
        painter.fillRect(left, top, slot_width, slot_height, self._background)
        cell = QRect(left + pad, top + pad, width, height)
        painter.save()
        painter.translate(cell.x(), cell.y())
        if clip:
            painter.setClipRect(0, 0, width, height)
        paint(painter)
        painter.restore()
        self._pictures[key] = PENDING
        self._pending[key] = (cell, pad, paint, clip, [(x, y)])
        return True

    def also(self, key: Hashable, x: int, y: int) -> None:
        """``key`` (``PENDING``) is drawn at ``x``, ``y`` too."""
        self._pending[key][4].append((x, y))

    def finish(self, target: QPainter) -> None:
        """The pass is over: what ``add`` painted becomes pictures, drawn on ``target``."""
        if self._painter is None:
            return
        self._painter.end()
        self._painter = None
        scratch, self._scratch = self._scratch, None
        assert scratch is not None
        image = scratch.toImage()
        if image.depth() != 32:
            image = image.convertToFormat(QImage.Format.Format_RGB32)
        used = self._shelf[1] + self._shelf[2]  # logical px of the scratch's top taken
        ratio = self._ratio
        words = image.bytesPerLine() // 4
        pixels = np.frombuffer(image.constBits(), np.uint32, used * ratio * words)
        inked = pixels.reshape(used * ratio, words) != np.uint32(self._background.rgba())
        for key, (cell, pad, paint, clip, places) in self._pending.items():
            left, top = (cell.x() - pad) * ratio, (cell.y() - pad) * ratio
            width, height = (cell.width() + 2 * pad) * ratio, (cell.height() + 2 * pad) * ratio
            ink = _box(inked[top : top + height, left : left + width])  # in the slot, device px
            slot = QRect(left, top, width, height)
            inside = QRect(pad * ratio, pad * ratio, cell.width() * ratio, cell.height() * ratio)
            if not inside.contains(ink) and not ink.isEmpty():  # it inks outside its cell
                self._pictures[key] = NOT_PICTURED
                for x, y in places:
                    target.save()
                    target.translate(x, y)
                    if clip:
                        target.setClipRect(0, 0, cell.width(), cell.height())
                    paint(target)
                    target.restore()
                continue
            picture: Picture = None
            if not ink.isEmpty():  # the ink's box on whole logical px, in the slot
                x0, y0 = ink.left() // ratio, ink.top() // ratio
                x1, y1 = -(-(ink.right() + 1) // ratio), -(-(ink.bottom() + 1) // ratio)
                box = QRect(x0 * ratio, y0 * ratio, (x1 - x0) * ratio, (y1 - y0) * ratio)
                pixmap = scratch.copy(box.translated(slot.topLeft()))
                pixmap.setDevicePixelRatio(ratio)
                picture = (x0 - pad, y0 - pad, pixmap)  # from the cell's top left
                size = box.width() * box.height() * 4
                if self._bytes + size > KEPT_BYTES:  # all dropped, this pass's kept
                    self._pictures = {k: v for k, v in self._pictures.items() if v is PENDING}
                    self.get = self._pictures.get
                    self._bytes = 0
                self._bytes += size
                for x, y in places:
                    target.drawPixmap(x + picture[0], y + picture[1], pixmap)
            self._pictures[key] = picture
            self.made += 1
        self._pending.clear()


def _box(inked: np.ndarray) -> QRect:
    """The bounding box of the true cells of ``inked`` (rows × columns); empty when none."""
    rows = np.flatnonzero(inked.any(axis=1))
    if not len(rows):
        return QRect()
    columns = np.flatnonzero(inked.any(axis=0))
    top, left = int(rows[0]), int(columns[0])
    return QRect(left, top, int(columns[-1]) - left + 1, int(rows[-1]) - top + 1)
