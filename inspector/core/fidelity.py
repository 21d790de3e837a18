"""The fidelity report of an imported run: what a faithful replay of it would miss.

A run imported from another tool's trace or message history is a normal run, but its source may
not have carried everything a request needs (tool definitions, ``tool_choice``, sampling
settings, the content itself). The report lists each gap once, with the steps it touches, so the
window and ``--json`` can say how far a replay can be trusted. The rules deciding the gaps are
in ``inspector.formats.fidelity``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GapKind = Literal[
    "tool_definitions",  # the tools offered to the model (names, schemas) are not known
    "tool_choice",  # whether a call was forced to a tool is not known
    "sampling",  # temperature, max_tokens, ... are not known
    "content",  # message content was not captured (only shapes, token counts)
    "system_prompt",  # the system prompt is not known
    "verdicts",  # validator verdicts are inferred from retry feedback, not recorded
    "tool_results",  # a tool call has no recorded result
    "timing",  # latencies are not known
    "raw",  # the raw wire bodies are not in the source
    "ending",  # the source stops mid-turn (a tool call with no answer after it)
    "request_differs",  # a request field the rebuilt scenario cannot send as it was recorded
]
ImportFormat = Literal["otel", "pydantic-ai", "openai-jsonl"]
# The "field" of a ``request_differs`` gap whose rebuilt scenario does not load at all.
SCENARIO_DOES_NOT_LOAD = "scenario"


class FidelityGap(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: GapKind
    steps: list[int] = Field(default_factory=list)  # 1-based step indexes; empty = the whole run
    detail: str = ""


class Fidelity(BaseModel):
    """Where an imported run came from and what its source did not carry."""

    model_config = ConfigDict(extra="forbid")

    format: ImportFormat
    source: str  # the file's name as given to ``import``
    replayable: bool  # every request is known well enough to replay it offline as it was
    gaps: list[FidelityGap] = Field(default_factory=list)

    def replay_verdict(self) -> str:
        """``replayable``, or ``not replayable as recorded`` with the request fields a replay
        would send otherwise (``request_differs`` gaps), e.g. ``(a replay sends another
        tool_choice)``."""
        if self.replayable:
            return "replayable"
        fields = [g.detail.split(":", 1)[0] for g in self.gaps if g.kind == "request_differs"]
        if SCENARIO_DOES_NOT_LOAD in fields:
            return "not replayable as recorded (the rebuilt scenario does not load)"
        differs = f" (a replay sends another {', '.join(fields)})" if fields else ""
        return f"not replayable as recorded{differs}"

    def lacks(self) -> list[str]:
        """The kinds of what the source did not carry (a request field the scenario cannot send
        is said by ``replay_verdict``)."""
        return [g.kind for g in self.gaps if g.kind != "request_differs"]
