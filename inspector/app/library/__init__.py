"""The library (docs/window.md): scenarios and recorded runs on the left, with their item
models. Emits what the user picks; the window decides what that shows."""
