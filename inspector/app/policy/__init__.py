"""The Policy tab (docs/window.md): the next run's policy and model as forms, and presets.
Emits nothing the window must obey; the window and replay read its values."""
