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
is painted in one pass or two passes in a row (``wanted``): texts repeated down a page (a
status, an attempt number, a kind) and the rows a live run repaints pass after pass; a text
painted once (a step number, an output preview, scrolled to new rows) is not worth its
picture. The columns whose texts recur down a run, a few hundred of them (attempt, kind,
status, tokens, latency), are pictured the second time a key is painted at all (``lasting``).
The cells pictured in a pass are painted on one scratch pixmap, with one painter (one painter
per picture was ~200 µs a picture), drawn from it at the end of the pass (``finish``), and the
scratch's used part is kept as their page. At most ``MADE_PER_PASS`` a pass (the others in a
later pass) and ``KEPT_BYTES`` of pages (past that, all pictures are dropped); the lasting
keys seen are forgotten past ``KEPT_KEYS``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap

KEPT_BYTES = 24 << 20  # a few pages of every column's distinct texts, at a ratio of 2
KEPT_KEYS = 8192  # lasting keys seen (``wanted``); past that, forgotten
PAD = 4  # logical px around a cell where ink that leaves it is looked for
MADE_PER_PASS = 48  # pictures painted in one pass at most (each ~20–40 µs)
SCRATCH_HEIGHT = 400  # logical px of the pass's scratch pixmap the new pictures go on
UNKNOWN = object()  # a default for ``get``: a key with no picture made (yet)
NOT_PICTURED = object()  # ``get``: painted, not pictured (it inks outside its cell)
PENDING = object()  # ``get``: pictured in this pass (``also`` draws it at another place)


# A picture: where it goes from the cell's top left (logical px), the page it is on and where
# (device px: x, y, width, height); None: the cell inks nothing.
Picture = tuple[int, int, QPixmap, int, int, int, int] | None
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
        self._seen: set[Hashable] = set()  # keys painted in this pass
        self._seen_before: set[Hashable] = set()  # and in the pass before
        self._seen_lasting: set[Hashable] = set()  # ``wanted(lasting=True)`` keys ever painted
        self._bytes = 0
        self._scratch: QPixmap | None = None
        self._painter: QPainter | None = None
        # (slot height, pad) -> its shelf's top and free x; slots of one shelf are alike
        self._shelves: dict[tuple[int, int], tuple[int, int]] = {}
        self._used = 0  # logical px of the scratch's top its shelves take
        # this pass's new pictures: key -> (its cell on the scratch, pad, paint, clip, its
        # shelf's top, where it goes on the target: [(x, y), ...])
        self._pending: dict[
            Hashable, tuple[QRect, int, Paint, bool, int, list[tuple[int, int]]]
        ] = {}
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
        self._seen_before, self._seen = self._seen, self._seen_before
        self._seen.clear()
        self._shelves.clear()
        self._used = 0

    def clear(self) -> None:
        self._pictures.clear()
        self._seen.clear()
        self._seen_before.clear()
        self._seen_lasting.clear()
        self._bytes = 0
        self._state = None

    def wanted(self, key: Hashable, lasting: bool = False) -> bool:
        """Whether to picture ``key`` (not pictured yet) now: it was painted before in this
        pass or the one before (``lasting``: in any pass since the pictures were last
        dropped; a column whose texts repeat down a run, few of them), and this pass has room
        for it."""
        room = len(self._pending) < MADE_PER_PASS
        if key in self._seen:
            return room
        self._seen.add(key)
        if key in self._seen_before:
            return room
        if lasting:
            if key in self._seen_lasting:
                return room
            if len(self._seen_lasting) >= KEPT_KEYS:
                self._seen_lasting.clear()
            self._seen_lasting.add(key)
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
        top, left = self._shelves.get((slot_height, pad), (0, self._width))
        if left + slot_width > self._width:  # a new shelf for these slots, below the others
            top, left = self._used, 0
            if top + slot_height > SCRATCH_HEIGHT or slot_width > self._width:
                return False
            self._used += slot_height
        self._shelves[(slot_height, pad)] = (top, left + slot_width)
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
        self._pending[key] = (cell, pad, paint, clip, top, [(x, y)])
        return True

    def also(self, key: Hashable, x: int, y: int) -> None:
        """``key`` (``PENDING``) is drawn at ``x``, ``y`` too."""
        self._pending[key][5].append((x, y))

    def finish(self, target: QPainter) -> None:
        """The pass is over: what ``add`` painted becomes pictures, drawn on ``target``. The
        scratch's used part is kept as the page they are on; what each cell inked is found a
        shelf at a time (the columns with ink, and for padded slots the pad rows')."""
        if self._painter is None:
            return
        self._painter.end()
        self._painter = None
        scratch, self._scratch = self._scratch, None
        assert scratch is not None
        ratio = self._ratio
        page = scratch.copy(0, 0, scratch.width(), self._used * ratio)  # what is used, kept
        page.setDevicePixelRatio(ratio)
        image = page.toImage()
        if image.depth() != 32:
            image = image.convertToFormat(QImage.Format.Format_RGB32)
        words = image.bytesPerLine() // 4
        pixels = np.frombuffer(image.constBits(), np.uint32, self._used * ratio * words)
        pixels = pixels.reshape(self._used * ratio, words)
        background = np.uint32(self._background.rgba())
        shelves: dict[int, tuple[bytes, bytes]] = {}  # top -> columns inked, pad rows inked
        kept = False
        for key, (cell, pad, paint, clip, top, places) in self._pending.items():
            inked = shelves.get(top)
            if inked is None:
                rows = (cell.height() + 2 * pad) * ratio
                block = pixels[top * ratio : top * ratio + rows] != background
                edge = pad * ratio
                edges = block[:edge].any(axis=0) | block[rows - edge :].any(axis=0) if pad else 0
                inked = shelves[top] = (block.any(axis=0).tobytes(), np.asarray(edges).tobytes())
            columns, edges = inked
            left, right = (cell.x() - pad) * ratio, (cell.right() + 1 + pad) * ratio
            first = columns.find(1, left, right)
            picture: Picture = None
            if first >= 0:
                last = columns.rfind(1, left, right)
                inner = pad * ratio
                if pad and (
                    first < left + inner or last >= right - inner or edges.find(1, left, right) >= 0
                ):  # it inks outside its cell: painted, not pictured
                    self._pictures[key] = NOT_PICTURED
                    for x, y in places:
                        target.save()
                        target.translate(x, y)
                        if clip:
                            target.setClipRect(0, 0, cell.width(), cell.height())
                        paint(target)
                        target.restore()
                    continue
                x0, x1 = first // ratio, -(-(last + 1) // ratio)  # on whole logical px
                box = (x0 * ratio, cell.y() * ratio, (x1 - x0) * ratio, cell.height() * ratio)
                picture = (x0 - cell.x(), 0, page, *box)
                for x, y in places:
                    target.drawPixmap(x + x0 - cell.x(), y, page, *box)
                kept = True
            self._pictures[key] = picture
            self.made += 1
        self._pending.clear()
        if kept:
            size = page.width() * page.height() * 4
            if self._bytes + size > KEPT_BYTES:  # all dropped but this page's
                self._pictures = {
                    k: v
                    for k, v in self._pictures.items()
                    if not isinstance(v, tuple) or v[2] is page
                }
                self.get = self._pictures.get
                self._bytes = 0
            self._bytes += size
