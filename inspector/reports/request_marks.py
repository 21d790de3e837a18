"""What the loop did to the request a step sent (issue 14), for the *Model saw* tab.

Each message of a step's request gets badges from the record, never from its text:

- ``NEW``: past the previous call's request (the messages the two share from the start are
  not new);
- ``FEEDBACK after attempt N · role``: equal to a message of ``feedback`` on the step that ended
  attempt N (the last step of that attempt);
- ``KEPT · attempt N (failed)``: equal to that step's answer, kept in the history;
- ``SYNTHETIC · final-answer call`` / ``feedback call`` / ``result``: the final-answer tool's
  call in a kept answer (a call of that step without a result of its own: the loop judged it
  instead of running it), a tool call the loop added to carry feedback (one the model never
  made, answered in the feedback), and the tool results the loop wrote for those calls.

Where a failed attempt's messages sit is read once, in the request of the step right after it
(the feedback is that request's tail, the kept answer and its results just before it); a later
request shows them where it still holds equal messages at those positions. The last step of
attempt N is found by bisection on the steps' attempt numbers, and each request extends the
previous one (``common_prefix`` on views of one list costs nothing), so the marks of a step
cost the same at step 10 and at step 10,000 of one attempt; over many attempts, a step or a
bisection bounded by the newer attempt's end per attempt.

The final-step instruction (B2) is split off the system prompt when the step says one was
appended and the prompt ends with the instruction the policy gives (or, without a policy, with
what the previous call's prompt lacks).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from inspector.core.messages import Message
from inspector.core.policy import Policy
from inspector.core.records import Step
from inspector.core.shared_list import common_prefix

BadgeKind = Literal["new", "feedback", "kept", "synthetic"]
NEW = "NEW"
FINAL_STEP = "FINAL-STEP INSTRUCTION"


class Badge(NamedTuple):
    kind: BadgeKind
    text: str


@dataclass(frozen=True)
class RequestMarks:
    """The badges of one request's messages by position; ``new_from``: the first position past
    the previous call's request (None: the first call of the turn), ``previous`` its step;
    ``system`` the system prompt without ``instruction``, the final-step instruction the loop
    appended on this step ("" when none)."""

    badges: Mapping[int, tuple[Badge, ...]] = field(default_factory=dict)
    new_from: int | None = None
    previous: int | None = None
    system: str = ""
    instruction: str = ""

    def new_count(self, total: int) -> int:
        return 0 if self.new_from is None else total - self.new_from


def _attempt_of(step: Step) -> int:
    return step.attempt


def last_step_of_attempt(steps: Sequence[Step], attempt: int, before: int) -> Step | None:
    """The last step of ``attempt`` among the steps before 1-based index ``before`` (steps come
    in attempt order: a bisection, not a scan)."""
    at = bisect_right(steps, attempt, hi=max(0, before - 1), key=_attempt_of) - 1
    return steps[at] if at >= 0 and steps[at].attempt == attempt else None


def previous_attempt_step(steps: Sequence[Step], index: int) -> Step | None:
    """The step whose answer ended the attempt before step ``index``'s (None on attempt 1)."""
    step = steps[index - 1]
    return last_step_of_attempt(steps, step.attempt - 1, index) if step.attempt > 1 else None


def request_marks(steps: Sequence[Step], index: int, policy: Policy | None = None) -> RequestMarks:
    """The marks of step ``index``'s request (1-based) in ``steps``, the run's steps in order."""
    step = steps[index - 1]
    messages = step.request.messages
    badges: dict[int, list[Badge]] = {}
    claimed: set[int] = set()
    # Newest attempt first: a position is the latest failed attempt's when two would match.
    # Each attempt ends before the next one's last step: the search for it stops there, and
    # when it is the step right before (one-step attempts) there is nothing to search.
    hi = max(0, index - 1)  # the attempt looked for ends in steps[:hi]
    for attempt in range(step.attempt - 1, 0, -1):
        at = hi - 1
        if at < 0 or steps[at].attempt != attempt:
            at = bisect_right(steps, attempt, hi=hi, key=_attempt_of) - 1
        if at < 0 or steps[at].attempt != attempt:
            continue
        hi = at
        failed = steps[at]
        if failed.index >= index:
            continue
        seen = steps[failed.index].request.messages  # the request right after the failure
        for position, found in _failure_marks(failed, seen).items():
            if position in claimed or position >= len(messages):
                continue
            if position < len(seen) and _same(messages[position], seen[position]):
                claimed.add(position)
                badges.setdefault(position, []).extend(found)
    new_from = previous = None
    if index > 1:
        before = steps[index - 2]
        previous = before.index
        new_from = common_prefix(before.request.messages, messages)
        for position in range(new_from, len(messages)):
            badges.setdefault(position, []).insert(0, Badge("new", NEW))
    system, instruction = _split_instruction(steps, step, policy)
    return RequestMarks(
        {p: tuple(b) for p, b in badges.items()}, new_from, previous, system, instruction
    )


def _same(a: Message, b: Message) -> bool:
    return a is b or a == b


def _failure_marks(failed: Step, seen: Sequence[Message]) -> dict[int, list[Badge]]:
    """Badges of the messages attempt ``failed.attempt`` left in ``seen`` (the request of the
    step after ``failed``): its feedback at the tail, its kept answer and the results of that
    answer's calls just before."""
    attempt = failed.attempt
    marks: dict[int, list[Badge]] = {}
    feedback = failed.feedback
    start = len(seen) - len(feedback)
    if start < 0 or not all(_same(seen[start + k], m) for k, m in enumerate(feedback)):
        start = len(seen)  # the feedback is not where the loop puts it: nothing is claimed
    else:
        for k, message in enumerate(feedback):
            marks[start + k] = [
                Badge("feedback", f"FEEDBACK after attempt {attempt} · {message.role}")
            ]
    # The kept answer and its calls' results, just before the feedback.
    kept_at: int | None = None
    position = start - 1
    while position >= 0 and seen[position].role == "tool":
        position -= 1
    if position >= 0 and _is_answer(seen[position], failed) and _is_new(position, failed, seen):
        kept_at = position
        marks[kept_at] = [Badge("kept", f"KEPT · attempt {attempt} (failed)")]
    if kept_at is None and start == len(seen):
        return marks  # neither feedback nor a kept answer: nothing to mark (a blind retry)
    response = failed.response
    judged: set[str] = set()  # the final-answer calls: judged, not run (no result of their own)
    if failed.internal_tool and response is not None:
        ran = {r.tool_call_id for r in failed.tool_results}
        judged = {c.id for c in response.tool_calls if c.id not in ran}
    synthetic: set[str] = set(judged)  # call ids whose results the loop wrote
    answer_calls = {c.id for c in response.tool_calls} if response is not None else set()
    carriers = [kept_at] if kept_at is not None else []
    carriers += [p for p in range(start, len(seen)) if seen[p].tool_calls]
    for carrier in carriers:
        message = seen[carrier]
        for call in message.tool_calls or ():
            if call.id in judged:
                marks[carrier].append(Badge("synthetic", "SYNTHETIC · final-answer call"))
            elif call.id not in answer_calls:  # a call the model never made
                marks[carrier].append(Badge("synthetic", "SYNTHETIC · feedback call"))
                synthetic.add(call.id)
        if carrier == kept_at:
            synthetic |= answer_calls  # every call of a kept answer gets a result from the loop
    first = kept_at + 1 if kept_at is not None else start
    for position in range(first, len(seen)):
        call_id = seen[position].tool_call_id
        if seen[position].role == "tool" and call_id in synthetic:
            marks.setdefault(position, []).append(Badge("synthetic", "SYNTHETIC · result"))
    return marks


def _is_answer(message: Message, failed: Step) -> bool:
    """``message`` is ``failed``'s answer as the loop keeps it: its text and its calls (and,
    with tool-role feedback, a feedback call after them). An empty reply is never kept."""
    response = failed.response
    if response is None or failed.status == "empty" or message.role != "assistant":
        return False
    calls = tuple(message.tool_calls or ())
    made = tuple(response.tool_calls)
    return message.content == (response.text or None) and calls[: len(made)] == made


def _is_new(position: int, failed: Step, seen: Sequence[Message]) -> bool:
    """``seen[position]`` is past what ``failed`` itself was sent (an answer equal to an older
    message is not that older message). Past its length it is; before (a history recomposed
    under ``latest``), the shared opening decides."""
    before = failed.request.messages
    return position >= len(before) or position >= common_prefix(before, seen)


def _split_instruction(steps: Sequence[Step], step: Step, policy: Policy | None) -> tuple[str, str]:
    system = step.request.system
    if step.forced is None or not step.forced.instruction_appended:
        return system, ""
    candidates: list[str] = []
    if policy is not None:
        candidates.append(policy.final_step_instruction)
        choice = step.forced.tool_choice
        if isinstance(choice, dict) and isinstance(choice.get("name"), str):
            candidates.append(policy.final_tool_instruction.replace("{tool}", choice["name"]))
    elif step.index > 1:  # what this prompt adds to the previous call's
        before = steps[step.index - 2].request.system
        if before and system.startswith(before + "\n\n"):
            candidates.append(system[len(before) + 2 :])
    for instruction in candidates:
        if instruction and system == instruction:
            return "", instruction
        if instruction and system.endswith("\n\n" + instruction):
            return system[: -len(instruction) - 2], instruction
    return system, ""
