"""The Validators tab (docs/validator-editor.md): the python validators file, the
``[[validators]]`` table and the flips of instant re-validation. ``ValidatorsPanel`` may touch
the store's path and a notifier; asks the window through ``flipsChanged``, ``stepRequested``,
``runRequested`` and ``copySaved``."""
