"""Works around a reference-count defect of shiboken6 6.12.0 on CPython 3.11.

Every call of a ``void`` Qt method from Python (``widget.update()``, ``painter.save()``,
``QStyledItemDelegate.paint`` ...) returns ``None`` without taking a new reference to it, and
every ``Signal.emit`` does the same with the bool it returns, so each call permanently drops
one reference. ``None`` starts with a few thousand, ``False`` with fewer; a timeline painting
for a minute, or a thousand emits of an unconnected signal, reach zero and CPython aborts with
"Fatal Python error: none_dealloc" (or "bool_dealloc"). Measured: 1,000 ``QWidget.update()``
calls lower ``sys.getrefcount(None)`` by exactly 1,000.

CPython 3.12 made these singletons immortal, which is the fix: on 3.11 we give ``None``,
``True`` and ``False`` so many references (2**40) that no run can use them up. Call once at
start-up, before any Qt object is made.
"""

from __future__ import annotations

import ctypes
import sys

_BALLAST = 1 << 40


def immortalize_none() -> None:
    """Gives None, True and False references enough for any run (no-op on 3.12+)."""
    if sys.version_info >= (3, 12) or hasattr(sys, "gettotalrefcount"):  # immortal / debug build
        return
    for singleton in (None, True, False):
        refcount = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt comes first
        if refcount.value < _BALLAST:
            refcount.value += _BALLAST
