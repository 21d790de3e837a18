"""One step in detail and the attempts side by side (docs/window.md): views of the shown run,
fed by the window."""
