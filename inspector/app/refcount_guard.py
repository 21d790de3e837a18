"""Works around a reference-count defect of shiboken6 6.12.0 on CPython 3.11.

Every call of a ``void`` Qt method from Python (``widget.update()``, ``painter.save()``,
``QStyledItemDelegate.paint`` ...) returns ``None`` without taking a new reference to it, so
each call permanently drops one reference. ``None`` starts with a few thousand; a timeline
painting for a minute reaches zero and CPython aborts with "Fatal Python error: none_dealloc".
Measured: 1,000 ``QWidget.update()`` calls lower ``sys.getrefcount(None)`` by exactly 1,000.

CPython 3.12 made ``None`` immortal, which is the fix: on 3.11 we give ``None`` so many
references (2**40) that no run can use them up. Call once at start-up, before any window.
"""

from __future__ import annotations

import ctypes
import sys

_BALLAST = 1 << 40


def immortalize_none() -> None:
    if sys.version_info >= (3, 12) or hasattr(sys, "gettotalrefcount"):  # immortal / debug build
        return
    refcount = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt: a PyObject's first field
    if refcount.value < _BALLAST:
        refcount.value += _BALLAST
