"""Agent Inspector: a desktop debugger for LLM agent turns."""

__version__ = "0.1.0"
