"""The PySide6 + qasync window (issue 5). The only package that imports Qt; only
``inspector.commands.gui`` imports it, lazily, so the CLI works without a display."""
