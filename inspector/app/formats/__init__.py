"""Open formats in the window (docs/formats.md): File › Import… (a foreign trace, history or log
stored as runs, the fidelity report shown with the run), Send to collector… (OTLP/HTTP push) and
Save as scenario… (a recorded run as a scenario that replays it offline).

Inputs: the store path, a notifier, the run the views show (a callable); talks back through
``runImported`` and ``scenarioSaved``."""
