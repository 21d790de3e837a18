"""The continuation policy of DESIGN §3 (``[policy]``). Every field is a knob the loop obeys;
the GUI builds its policy form from this model, so a new field appears there by itself."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

FeedbackHistory = Literal["accumulate", "latest", "none", "custom"]
FeedbackRole = Literal["user", "tool", "system"]
FinalStep = Literal["force_text", "none"]
OutputMode = Literal["native", "tool", "prompted"]
OnInvalidOutput = Literal["raise", "fallback"]
OnEmptyFinal = Literal["finalize", "retry", "error"]
OnStepCap = Literal["raise", "fallback"]
OnRefusal = Literal["raise", "retry", "fallback"]
OnValidatorError = Literal["fail", "retry", "ignore"]

# Sane bounds (docs/engine.md "Values"): counts fit SQLite and Qt's spin boxes; a time limit is
# finite — `regex` treats an infinite timeout as already expired.
MAX_COUNT = 2**31 - 1
MAX_WAIT_S = 86_400.0
MAX_VALIDATOR_TIMEOUT_S = 3_600.0

DEFAULT_FINAL_STEP_INSTRUCTION = "Tools are disabled now. Answer the user with what you have."
DEFAULT_FINAL_TOOL_INSTRUCTION = "This is the last step: call the {tool} tool now with your answer."


class Policy(BaseModel):
    # Numbers as text, strict counts and flags: the one rule of docs/engine.md "Values".
    model_config = ConfigDict(extra="forbid", validate_assignment=True, coerce_numbers_to_str=True)

    max_attempts: int = Field(
        3,
        ge=1,
        le=MAX_COUNT,
        strict=True,
        description="Validation attempts per turn (1 = no retry).",
    )
    feedback_history: FeedbackHistory = Field(
        "accumulate", description="Which earlier feedback the next attempt sees."
    )
    feedback_builder: str = Field(
        "", description='"file.py:function" building the next history (feedback_history = custom).'
    )
    feedback_role: FeedbackRole = Field("user", description="Role of injected feedback messages.")
    keep_failed_attempts: bool = Field(
        True,
        strict=True,
        description="Failed assistant output stays in the history the model sees.",
    )
    clear_failed_attempts: bool = Field(
        True,
        strict=True,
        description="The transcript (what an end user sees) drops failed attempts.",
    )
    max_steps: int = Field(
        20, ge=1, le=MAX_COUNT, strict=True, description="Model calls per turn, retries included."
    )
    final_step: FinalStep = Field(
        "force_text", description="On the last allowed step, disable tools and ask for an answer."
    )
    final_step_instruction: str = Field(
        DEFAULT_FINAL_STEP_INSTRUCTION, description="Appended to the system prompt on that step."
    )
    output_mode: OutputMode = Field(
        "tool", description="How structured output is requested (only with [output])."
    )
    on_invalid_output: OnInvalidOutput = Field(
        "raise", description="When retries are exhausted: fail, or use the fallback."
    )
    fallback: Any = Field(None, description="Fallback output (validated against the schema).")
    fallback_function: str = Field("", description='"file.py:function" returning the fallback.')
    fallback_in_history: bool = Field(
        False,
        strict=True,
        description="Record the fallback in the transcript as an assistant message.",
    )
    on_empty_final: OnEmptyFinal = Field(
        "retry", description="A final step with no content: accept it, retry, or fail."
    )
    on_step_cap: OnStepCap = Field("raise", description="When max_steps is reached.")
    on_refusal: OnRefusal = Field("raise", description="When the model refuses.")
    on_validator_error: OnValidatorError = Field(
        "fail",
        description="A validator that raises or times out: end the turn (error), retry without "
        "feedback, or ignore its verdict.",
    )
    validator_timeout_s: float = Field(
        5.0,
        gt=0,
        le=MAX_VALIDATOR_TIMEOUT_S,
        strict=True,
        description="A validator running longer yields an error verdict.",
    )
    tool_timeout_s: float = Field(
        60.0,
        gt=0,
        le=MAX_WAIT_S,
        strict=True,
        description="A tool running longer gives the model an error result.",
    )
    final_tool_instruction: str = Field(
        DEFAULT_FINAL_TOOL_INSTRUCTION,
        description="Appended instead on the last step in tool output mode ({tool}: its name).",
    )

    @model_validator(mode="after")
    def _needs(self) -> Policy:
        if self.feedback_history == "custom" and not self.feedback_builder:
            raise ValueError(
                'feedback_builder: feedback_history = "custom" needs a "file.py:function"'
            )
        uses_fallback = "fallback" in (self.on_invalid_output, self.on_step_cap, self.on_refusal)
        if uses_fallback and self.fallback is None and not self.fallback_function:
            raise ValueError(
                "fallback: a fallback handler is chosen but neither fallback nor "
                "fallback_function is set"
            )
        return self
