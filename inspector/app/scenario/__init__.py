"""The Scenario tab (docs/scenario-editor.md): the scenario's system prompt, messages and
tools edited in place; emits ``saved``."""
