"""The local model server in the window (docs/local-model.md): ``LocalModelControl`` runs
it off the UI thread, ``LocalModelStatus`` shows it."""
