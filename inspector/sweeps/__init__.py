"""Policy sweeps (issue 15): N runs per arm of a grid of scenario settings, and their statistics.

Pure: no Qt, HTTP or SQLite. The command line (``inspector.commands.sweep``) and a window read
stored runs through the store and call these functions over them, so both show the same numbers.
"""
