"""The PySide6 + qasync window (issue 5). The only package that imports Qt; only
``inspector.commands.gui`` imports it, lazily, so the CLI works without a display."""

from inspector.app.runtime.refcount_guard import immortalize_none

# Before any Qt object exists: shiboken6 6.12.0 on CPython 3.11 drops a reference to None on
# every void Qt call, which aborts the interpreter after a few thousand (see refcount_guard).
# Every module of this package imports this package first, so no Qt call can come earlier.
immortalize_none()
