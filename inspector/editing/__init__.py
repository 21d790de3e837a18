"""Editing scenario files in place (pure Python and tomlkit, no Qt): what the window's scenario
editor and validators table write through."""

from inspector.editing.scenario_document import ScenarioDocument

__all__ = ["ScenarioDocument"]
