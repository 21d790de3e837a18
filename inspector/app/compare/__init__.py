"""Comparing runs (docs/window-compare.md): ``CompareController`` (the action, reading the
records off the UI thread) and the ``CompareView`` with its item model and delegates. May touch
the runner, the ``RunFocus``, the store's path and a notifier; asks the window through
``shown``/``timelineRequested``."""
