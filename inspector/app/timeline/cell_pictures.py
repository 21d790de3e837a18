"""``CellPictures``: what a timeline cell paints, kept as a pixmap of the cell and drawn again
with one ``drawPixmap`` (~1 µs) instead of painted again (a ``drawText`` lays its text out on
every call, ~10–30 µs; a status cell is ~12 calls into Qt, antialiased).

A picture is the cell painted by the very calls the row painter would make (``drawText`` of the
elided text, the delegate's ``paint_status_at`` / ``paint_latency_at``) on a pixmap filled with
the viewport's background, at the target's device pixel ratio: drawn where the cell is, it gives
the pixels painting the cell there gives, provided that

- the cell starts and ends on whole device pixels (at a device pixel ratio of 1.5 a cell at an
  odd logical y starts mid-pixel: the row painter paints such a cell itself);
- what is under the cell is the plain background (the row painter's rows: no selection, hover,
  grid or alternate colour; the viewport's background a solid colour);
- nothing the cell paints falls outside it: a cell that is not clipped to itself (a plain
  text) is painted with 4 px around it and pictured only when those stayed background (a text
  that overflows its cell even elided stays ``drawText``'s).

Pictures depend on what ``begin`` is given (background, device pixel ratio, and a state: text
colours, fonts, palette, render hints): when it changes, they are all dropped. A cell's key says
the rest (its text, width, height, alignment, status...). A key is pictured the second time it
is painted (``wanted``): a text seen once (a step number, an output preview, scrolling) is not
worth its picture. The cells pictured in a pass are painted (as well as painted where they
are) on one scratch pixmap, with one painter, and cut out of it at the end of the pass
(``finish``): a picture costs ~20–40 µs, one painter per picture was ~200 µs. At most
``MADE_PER_PASS`` a pass (the others in a later pass), ``KEPT_BYTES`` of pictures and
``KEPT_KEYS`` keys seen; past either of the last two, all are dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap

KEPT_BYTES = 24 << 20  # a few pages of every column's distinct texts, at a ratio of 2
KEPT_KEYS = 8192
PAD = 4  # logical px around a cell checked for ink that leaves it
MADE_PER_PASS = 48  # pictures painted in one pass at most (each ~20–40 µs)
SCRATCH_HEIGHT = 640  # logical px of the pass's scratch pixmap the new pictures go on
UNKNOWN = object()  # ``get``'s answer for a key with no picture made (yet)


class CellPictures:
    """Pictures of cells by key, for the pass ``begin`` describes."""

    def __init__(self) -> None:
        self._state: Hashable = None
        self._background = QColor()
        self._ratio = 1.0
        self._width = 0  # the scratch's logical width (the viewport's, padded)
        # None: painted, not pictured (or its picture is on this pass's scratch)
        self._pictures: dict[Hashable, QPixmap | None] = {}
        self._seen: set[Hashable] = set()
        self._blanks: dict[tuple[int, int], QImage] = {}  # the background, by size
        self._bytes = 0
        self._scratch: QPixmap | None = None
        self._painter: QPainter | None = None
        self._shelf = (0, 0, 0)  # the scratch's free place: x, y, height of the shelf
        self._pending: list[tuple[Hashable, QRect, bool]] = []  # key, cell on the scratch, clip
        self.made = 0  # pictures made (tests and benches read it)
        self.get = self._pictures.get  # key, default -> QPixmap | None | default

    def begin(self, state: Hashable, background: QColor, ratio: float, width: int) -> None:
        """A paint pass on ``background`` at device pixel ratio ``ratio`` in a viewport
        ``width`` wide; ``state`` holds everything else the pictures depend on (colours,
        fonts, palette)."""
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
        self._blanks.clear()
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
        self,
        key: Hashable,
        width: int,
        height: int,
        paint: Callable[[QPainter], None],
        *,
        clip: bool = False,
    ) -> None:
        """Paints ``key``'s cell (``width`` × ``height``) on this pass's scratch with ``paint``
        (given a painter whose origin is the cell's top left, clipped to the cell when
        ``clip``); ``finish`` makes it a picture, unless it painted outside the cell."""
        pad = 0 if clip else PAD  # what is clipped to the cell cannot leave it
        slot_width, slot_height = width + 2 * pad, height + 2 * pad
        x, y, shelf = self._shelf
        if x + slot_width > self._width or slot_height != shelf:  # a new shelf below
            x, y, shelf = 0, y + shelf, slot_height
        if y + slot_height > SCRATCH_HEIGHT or slot_width > self._width:
            return  # the scratch is full: pictured in a later pass
        self._shelf = (x + slot_width, y, shelf)
        painter = self._painter
        if painter is None:
            ratio = self._ratio
            scratch = QPixmap(math.ceil(self._width * ratio), math.ceil(SCRATCH_HEIGHT * ratio))
            scratch.setDevicePixelRatio(ratio)  # not filled: each slot is, when taken
            self._scratch = scratch
            painter = self._painter = QPainter(scratch)
        painter.fillRect(x, y, slot_width, slot_height, self._background)
        cell = QRect(x + pad, y + pad, width, height)
        painter.save()
        painter.translate(cell.x(), cell.y())
        if clip:
            painter.setClipRect(0, 0, width, height)
        paint(painter)
        painter.restore()
        self._pictures[key] = None  # painted as before for the rest of this pass
        self._pending.append((key, cell, not clip))

    def finish(self) -> None:
        """The pass is over: what ``add`` painted becomes pictures."""
        if self._painter is None:
            return
        self._painter.end()
        self._painter = None
        scratch, self._scratch = self._scratch, None
        assert scratch is not None
        image = scratch.toImage() if any(check for _, _, check in self._pending) else None
        ratio = self._ratio
        for key, cell, check in self._pending:
            device = QRect(
                round(cell.x() * ratio),
                round(cell.y() * ratio),
                math.ceil(cell.width() * ratio),
                math.ceil(cell.height() * ratio),
            )
            if check and not self._inside(image, device, round(PAD * ratio)):
                continue  # it paints outside its cell: painted, not pictured
            picture = scratch.copy(device)
            picture.setDevicePixelRatio(ratio)
            size = picture.width() * picture.height() * 4
            if self._bytes + size > KEPT_BYTES:  # all dropped, this pass's kept
                self._pictures.clear()
                self._bytes = 0
            self._bytes += size
            self._pictures[key] = picture
            self.made += 1
        self._pending.clear()

    def _inside(self, image: QImage | None, inner: QRect, pad: int) -> bool:
        """Whether ``image`` is the background in the ``pad`` pixels around ``inner``."""
        assert image is not None
        left, top, width, height = inner.x(), inner.y(), inner.width(), inner.height()
        strips = (
            QRect(left - pad, top - pad, width + 2 * pad, pad),
            QRect(left - pad, top + height, width + 2 * pad, pad),
            QRect(left - pad, top, pad, height),
            QRect(left + width, top, pad, height),
        )
        blanks = self._blanks
        for strip in strips:
            size = (strip.width(), strip.height())
            blank = blanks.get(size)
            if blank is None:
                blank = blanks[size] = QImage(size[0], size[1], image.format())
                blank.fill(self._background)
            if image.copy(strip) != blank:
                return False
        return True
