"""B1: what the model sees, above all after a failed attempt.

The conversation is kept as an ordered list of blocks: ``Work`` (tool round trips, always part of
the conversation) and ``FailedAttempt`` (a rejected candidate and the feedback it drew).
``failed_attempt`` and ``compose_history`` are pure functions applying ``feedback_role``,
``feedback_history`` and ``keep_failed_attempts``; ``Conversation`` is the little state the loop
keeps with them. Composing runs only after a failure, so ordinary steps just append (per-step cost
stays flat). A custom ``feedback_builder`` replaces the composition altogether.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from inspector.core.handlers import HookError, dump_verdicts, dumps, hook_error
from inspector.core.messages import Message, ToolCall, assistant, tool_result
from inspector.core.output import final_tool_name
from inspector.core.policy import Policy
from inspector.core.records import Verdict
from inspector.core.verdict_policy import blames_model, broken
from inspector.core.worker import pool
from inspector.core.worker.contexts import FeedbackContext
from inspector.core.worker.protocol import Target

DEFAULT_FEEDBACK = "Your previous answer was rejected. Try again."
REJECTED = "Rejected by validation."
NOT_EXECUTED = "Not executed: the final answer in the same reply was rejected."
FEEDBACK_TOOL = "validation_feedback"
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


@dataclass(frozen=True)
class Work:
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class FailedAttempt:
    attempt: int
    candidate: tuple[Message, ...]  # the rejected assistant message (+ results pairing its calls)
    feedback: tuple[Message, ...]  # what was injected for the next attempt


Block = Work | FailedAttempt


def feedback_text(verdicts: Sequence[Verdict]) -> str:
    """The failing verdicts' feedback, one per line, de-duplicated; error verdicts add nothing
    (the model cannot fix a broken validator)."""
    lines: list[str] = []
    for v in verdicts:
        if not v.ok and v.status == "fail":
            text = v.feedback or v.reason
            if text and text not in lines:
                lines.append(text)
    return "\n".join(lines) or DEFAULT_FEEDBACK


SYSTEM_AS_USER_NOTE = (
    'feedback_role "system" was sent as "user": this provider has no system messages inside a '
    "conversation (only its top-level system prompt), so the record shows what was sent"
)


def effective_policy(policy: Policy, system_in_conversation: bool) -> Policy:
    """The policy a turn runs under: system-role feedback becomes user feedback for a provider
    that cannot send a system message mid-conversation (Anthropic), so the request recorded is
    the request sent — not a system message that went out as user text."""
    if policy.feedback_role == "system" and not system_in_conversation:
        return policy.model_copy(update={"feedback_role": "user"})
    return policy


def policy_notes(asked: Policy, effective: Policy) -> list[str]:
    """One sentence per change ``effective_policy`` made (the record's ``notes``)."""
    return [SYSTEM_AS_USER_NOTE] if asked.feedback_role != effective.feedback_role else []


def failed_attempt(
    attempt: int,
    candidate: Message | None,
    judged_call: ToolCall | None,
    text: str,
    policy: Policy,
    taken: Collection[str] = (),
) -> FailedAttempt:
    """Builds the block for a rejected candidate under ``feedback_role`` / ``keep_failed_attempts``.

    Every tool call the kept candidate made gets a result, so the history stays well-formed for
    providers that insist on it: ``Rejected by validation.`` for the judged final-answer call, and
    ``Not executed: ...`` for the other calls of that reply, which never ran.

    With ``feedback_role = "tool"`` and the candidate kept, the feedback *is* the result of the
    judged final-answer call; a kept plain-text candidate becomes one assistant message holding its
    text *and* a synthetic ``validation_feedback`` call, answered by the feedback. When the
    candidate is not kept (or the reply was empty) a synthetic call + result pair stands alone.
    The synthetic tool is renamed ``validation_feedback_1``, ``_2``... when ``taken`` (the names
    of the tools offered) already has the name.
    """
    calls = candidate.tool_calls or () if candidate else ()
    kept = candidate if policy.keep_failed_attempts else None

    def paired(call: ToolCall) -> Message:
        judged = judged_call is None or call.id == judged_call.id
        return tool_result(call.id, REJECTED if judged else NOT_EXECUTED, call.name)

    pairing = tuple(paired(c) for c in calls)
    rejected = (candidate, *pairing) if candidate is not None else ()
    if policy.feedback_history == "none":
        return FailedAttempt(attempt, rejected, ())
    if policy.feedback_role != "tool":
        return FailedAttempt(attempt, rejected, (Message(role=policy.feedback_role, content=text),))
    if kept is not None and judged_call is not None:
        feedback = tuple(
            tool_result(c.id, text, c.name) if c.id == judged_call.id else paired(c) for c in calls
        )
        return FailedAttempt(attempt, (kept,), feedback)
    name = final_tool_name(taken, FEEDBACK_TOOL)
    call = ToolCall(id=f"feedback_{attempt}", name=name, arguments={})
    result = tool_result(call.id, text, name)
    if kept is not None:
        merged = assistant(kept.content, (*calls, call))
        return FailedAttempt(attempt, (merged,), (*pairing, result))
    return FailedAttempt(attempt, rejected, (assistant(None, (call,)), result))


def compose_history(
    prefix: Sequence[Message], blocks: Sequence[Block], policy: Policy
) -> list[Message]:
    """The next attempt's history: the prefix, every work block and, by ``feedback_history``,
    accumulate: every failed attempt and its feedback; latest: only the most recent failed attempt
    and its feedback; none: no failed attempt at all — a blind retry, whatever
    ``keep_failed_attempts`` says (the request is the opening one plus the work done). Failed
    candidates appear only with ``keep_failed_attempts``."""
    last_failed = next((b for b in reversed(blocks) if isinstance(b, FailedAttempt)), None)
    mode = policy.feedback_history
    out = list(prefix)
    for block in blocks:
        if isinstance(block, Work):
            out.extend(block.messages)
        elif mode == "none" or (mode == "latest" and block is not last_failed):
            continue
        else:
            if policy.keep_failed_attempts:
                out.extend(block.candidate)
            out.extend(block.feedback)
    return out


async def build_custom_history(
    target: Target, ctx: FeedbackContext, timeout_s: float
) -> tuple[list[Message], str]:
    """The builder's next history and what it printed; ``HookError`` if it failed."""
    reply = await pool.call(target, (ctx,), {}, timeout_s)
    if reply.error is not None:
        raise hook_error("FeedbackBuilderError", "feedback_builder", reply)
    try:
        return _MESSAGES.validate_python(reply.value), reply.captured
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise HookError(
            "FeedbackBuilderError",
            f"feedback_builder must return a list of messages: [{where}] {first['msg']}",
            reply.captured,
        ) from None


class Conversation:
    """What the model is sent next: the opening messages, then work and failed-attempt blocks
    composed under the policy. A custom feedback builder's history replaces all of it and
    becomes the prefix that later steps extend."""

    def __init__(
        self,
        opening: Sequence[Message],
        policy: Policy,
        builder: Target | None = None,
        tool_names: Collection[str] = (),
    ) -> None:
        self.opening = list(opening)
        self.policy = policy
        self.builder = builder
        self.tool_names = tool_names  # the synthetic feedback tool never takes one of these names
        self.prefix = list(opening)
        self.blocks: list[Block] = []
        # Only ever extended in place or replaced by a new list, never shortened or edited:
        # requests hold views of its prefix (``build_request``).
        self.messages = list(opening)
        self.captured = ""  # what the custom builder printed on its last call

    def add_work(self, messages: tuple[Message, ...]) -> None:
        self.blocks.append(Work(messages))
        self.messages.extend(messages)

    async def add_failure(
        self,
        attempt: int,
        index: int,
        candidate: Message | None,
        judged_call: ToolCall | None,
        verdicts: Sequence[Verdict],
    ) -> list[Message]:
        """Takes in the candidate rejected on step ``index`` (which saw ``messages``); returns
        the feedback for the next attempt: the messages past what the model saw (the step's
        ``feedback``). Raises ``HookError`` when a custom builder breaks."""
        if not blames_model(verdicts) and broken(verdicts):
            # Only broken validators objected (on_validator_error = "retry"): the model is not
            # told it failed; the attempt is sampled again from the same history.
            return []
        text = feedback_text(verdicts)
        block = failed_attempt(attempt, candidate, judged_call, text, self.policy, self.tool_names)
        if self.builder is None:
            self.blocks.append(block)
            composed = compose_history(self.prefix, self.blocks, self.policy)
            if self.policy.feedback_history == "accumulate":
                # The composition extends what was sent: the same list grows, so the requests
                # before and after the failure stay views of one list (no compare needed to
                # find what is new: ``common_prefix``).
                self.messages.extend(composed[len(self.messages) :])
            else:
                self.messages = composed
            return list(block.feedback)
        seen = [*self.messages, *block.candidate]
        ctx = FeedbackContext(
            attempt=attempt,
            step=index,
            history=dumps(self.messages),
            candidate=candidate.model_dump() if candidate else None,
            verdicts=dump_verdicts(verdicts),
            feedback=text,
            default_next=dumps([*seen, *block.feedback]),
            prefix=dumps(self.opening),
        )
        built, self.captured = await build_custom_history(
            self.builder, ctx, self.policy.validator_timeout_s
        )
        self.prefix, self.blocks, self.messages = list(built), [], list(built)
        common = 0
        for a, b in zip(built, seen, strict=False):
            if a != b:
                break
            common += 1
        return built[common:]
