"""The run record of DESIGN §4. ``RunRecord.model_dump(mode="json")`` *is* the ``--json`` output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from inspector.core.fidelity import Fidelity
from inspector.core.messages import Message, ToolCall
from inspector.core.policy import Policy

RunStatus = Literal["succeeded", "fallback", "failed", "error", "cancelled", "interrupted"]
Termination = Literal[
    "stop",
    "validator_exhausted",
    "step_cap",
    "refusal",
    "empty_final",
    "fallback",
    "validator_stop",
    "validator_error",  # a validator raised or timed out (policy.on_validator_error = "fail")
    "provider_error",
    "cancelled",
]
StepStatus = Literal[
    "pending",  # only ever seen by subscribers while a step is in flight; never in a final record
    "success",
    "empty",
    "failed_validation",
    "validator_error",  # judged only by validators that broke: not the model's failure
    "error",
    "cancelled",
    "interrupted",
]
VerdictStatus = Literal["pass", "fail", "error"]
# How a verdict is marked wherever it is shown: the timeline, compare, re-validation output.
VERDICT_MARK: dict[str, str] = {"pass": "✓", "fail": "✗", "error": "!"}
ToolChoice = (
    str | dict[str, Any]
)  # "auto" | "none" | "required" | {"type": "function", "name": ...}
RECORD_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Record):
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class ToolSpec(_Record):
    """A tool as offered to the model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class StepRequest(_Record):
    """Exactly what one model call was sent (normalised; the raw bodies are in ``Step.raw``)."""

    system: str
    messages: Sequence[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    response_format: dict[str, Any] | None = None


class StepResponse(_Record):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    refusal: str | None = None
    reasoning: str | None = None  # thinking / reasoning text where the provider sends it


def _is_none(value: object) -> bool:
    return value is None


class ToolResult(_Record):
    tool_call_id: str
    name: str
    content: str
    error: str | None = None
    replayed: bool = False  # True when a replay reused the recorded result (side-effect tools)
    captured: str | None = Field(default=None, exclude_if=_is_none)  # what the tool printed


class SourceLocation(_Record):
    """A line of a user's python file (1-based)."""

    file: str
    line: int


class Verdict(_Record):
    validator: str
    ok: bool
    status: VerdictStatus
    reason: str = ""
    feedback: str | None = None  # the text this verdict contributes to the next attempt's feedback
    # An ``error`` verdict of a python validator: where in the user's file it raised. Left out
    # of the JSON when unknown, so records without it read and write exactly as before.
    location: SourceLocation | None = Field(default=None, exclude_if=_is_none)
    # What a python validator wrote to stdout/stderr during this call (capped; left out when
    # nothing): shown with the verdict, never mixed into the app's own output.
    captured: str | None = Field(default=None, exclude_if=_is_none)

    @classmethod
    def passed(cls, validator: str, reason: str = "") -> Verdict:
        return cls(validator=validator, ok=True, status="pass", reason=reason)

    @classmethod
    def failed(cls, validator: str, reason: str, feedback: str | None = None) -> Verdict:
        return cls(validator=validator, ok=False, status="fail", reason=reason, feedback=feedback)

    @classmethod
    def errored(
        cls, validator: str, reason: str, location: SourceLocation | None = None
    ) -> Verdict:
        return cls(validator=validator, ok=False, status="error", reason=reason, location=location)


class Forced(_Record):
    """Marks a step whose request the loop forced (B2 final step, B3 pinned final-answer tool)."""

    tool_choice: ToolChoice | None = None
    instruction_appended: bool = False


class RawExchange(_Record):
    """Raw wire bodies of one model call, auth redacted (empty for the scripted model)."""

    request: Any = None
    response: Any = None


class Step(_Record):
    index: int  # 1-based, counts every model call of the turn
    attempt: int  # 1-based validation attempt
    status: StepStatus
    request: StepRequest
    response: StepResponse | None = None
    tool_results: list[ToolResult] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    feedback: list[Message] = Field(default_factory=list)
    forced: Forced | None = None
    cleared: bool = False
    internal_tool: bool = False
    latency_ms: float | None = None
    ttft_ms: float | None = None
    error: str | None = None  # provider / tool error for a step whose status is "error"
    raw: RawExchange | None = None
    # What the feedback builder or fallback function printed while handling this rejected step
    # (left out when nothing; a validator's or tool's output is on its verdict or result).
    captured: str | None = Field(default=None, exclude_if=_is_none)


class Budgets(_Record):
    attempts_used: int = 0
    max_attempts: int
    steps_used: int = 0
    max_steps: int
    transport_retries: int = 0


class RunError(_Record):
    type: str
    message: str


class RunRecord(_Record):
    version: int = RECORD_VERSION
    run_id: str
    scenario: str
    started_at: str  # ISO 8601, UTC
    duration_ms: float = 0.0
    policy: Policy
    status: RunStatus
    termination: Termination | None = None
    budgets: Budgets
    output: Any = None
    error: RunError | None = None
    usage: Usage = Field(default_factory=Usage)
    replay_of: str | None = None
    steps: list[Step] = Field(default_factory=list)
    transcript: list[Message] = Field(default_factory=list)
    # Beyond DESIGN §4: what ran, so a run can be replayed and compared as it was.
    provider: str = ""
    model: str = ""
    fallback_trigger: Termination | None = None  # what made the handler supply the fallback
    scenario_source: dict[str, Any] = Field(default_factory=dict)
    # The folder its relative paths (python validators, tools) resolve against, and where the
    # scenario came from (a path or demo:NAME): what replay and re-validation load it from.
    scenario_dir: str = ""
    scenario_origin: str = ""
    overrides: list[str] = Field(default_factory=list)
    # What the engine changed so the provider could take the turn (one sentence each), e.g. system
    # feedback sent as user feedback to a provider without system messages mid-conversation.
    notes: list[str] = Field(default_factory=list)
    # An imported run (``agent-inspector import``): its source and what a replay would miss.
    # Left out of the JSON for a run this tool recorded, so those records read as before.
    fidelity: Fidelity | None = Field(default=None, exclude_if=_is_none)
    # How the run was captured when not by the engine: "proxy" (``agent-inspector proxy``).
    # Left out of the JSON when None, so other records read and write exactly as before.
    via: str | None = Field(default=None, exclude_if=_is_none)


def step_kind(step: Step) -> str:
    """tool call | final | empty | error | cancelled | interrupted | pending — what the step
    was; the one definition the terminal timeline, the window and the reports label steps by."""
    if step.status in ("empty", "error", "cancelled", "interrupted", "pending"):
        return step.status
    response = step.response
    if response and response.tool_calls and not step.internal_tool and not response.refusal:
        return "tool call"
    return "final"
