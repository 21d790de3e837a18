"""What each model call is sent (B2 forcing, B3 tool choice), as one pure function."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.messages import Message
from inspector.core.output import OutputPlan, forced_tool_choice, tool_choice
from inspector.core.policy import Policy
from inspector.core.records import Forced, StepRequest, ToolSpec
from inspector.core.shared_list import SharedPrefix


def build_request(
    *,
    index: int,
    system: str,
    history: Sequence[Message],
    offered: list[ToolSpec],
    plan: OutputPlan,
    has_user_tools: bool,
    policy: Policy,
) -> tuple[StepRequest, Forced | None]:
    """The request of step ``index`` (1-based) and its forced-step marker.

    On the last allowed step with ``final_step = "force_text"`` and tools offered, tools are
    disabled and ``final_step_instruction`` is appended to the system prompt (whose original text
    stays as the prefix); in tool output mode the final-answer tool is pinned instead and
    ``final_tool_instruction`` is appended.
    """
    choice = tool_choice(plan, has_user_tools)
    forced = None
    if index == policy.max_steps and policy.final_step == "force_text" and offered:
        choice = forced_tool_choice(plan)
        instruction = policy.final_step_instruction
        if plan.final_tool is not None:  # tools are not disabled: the final-answer tool is pinned
            instruction = policy.final_tool_instruction.replace("{tool}", plan.final_tool.name)
        system = f"{system}\n\n{instruction}" if system else instruction
        forced = Forced(tool_choice=choice, instruction_appended=True)
    elif plan.final_tool is not None and isinstance(choice, dict):
        forced = Forced(tool_choice=choice, instruction_appended=False)
    # model_construct: every part is already a validated record. The messages are a view of the
    # conversation's list, which only grows (``Conversation.messages``): a request costs O(1),
    # not a copy of the history (steps x history pointers over a turn).
    messages = SharedPrefix(history, len(history)) if isinstance(history, list) else list(history)
    request = StepRequest.model_construct(
        system=system,
        messages=messages,
        tools=offered,
        tool_choice=choice,
        response_format=plan.response_format,
    )
    return request, forced
