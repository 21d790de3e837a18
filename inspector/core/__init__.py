"""The engine: pure Python, no Qt, HTTP or SQLite. Everything else subscribes to its events."""
