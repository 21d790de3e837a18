"""The use cases the command line and the window share, with no Qt: building a turn or a replay,
settling a record, re-validating runs, loading a run or a comparison (docs/architecture.md).

``inspector.commands`` and ``inspector.app`` both call these; they own only their own
presentation (exit codes and printed lines, or signals and widgets).
"""
