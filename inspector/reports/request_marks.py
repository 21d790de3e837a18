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
request shows them where it still holds equal messages at those positions. A ``FailureIndex``
keeps, per run, the attempts that left something there (and what), each attempt looked at once
as the steps arrive: a step's marks walk only those attempts (none in a blind retry), and each
request extends the previous one (``common_prefix`` on views of one list costs nothing), so the
marks of the last step cost the same after 10 attempts and after 10,000 once the index is built.
Without an index, ``request_marks`` builds one over the steps before the step asked.

The final-step instruction (B2) is split off the system prompt when the step says one was
appended and the prompt ends with the instruction the policy gives (or, without a policy, with
what the previous call's prompt lacks).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Literal, NamedTuple, Protocol, cast

from inspector.core.messages import Message
from inspector.core.policy import Policy
from inspector.core.records import Step, StepRequest
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


class Started(Protocol):
    """A step as it started: its attempt and its request (a ``Step``, a ``LiveStep``)."""

    @property
    def attempt(self) -> int: ...

    @property
    def request(self) -> StepRequest: ...


class _Left(NamedTuple):
    """What failed attempt ``failed.attempt`` left in ``seen``, the next step's request."""

    failed: Step
    seen: Sequence[Message]
    marks: dict[int, list[Badge]]


_attempt = attrgetter("attempt")


class FailureIndex:
    """The failed attempts of one run that left something in the request after them (feedback,
    a kept answer), with the badges of what they left. ``update`` looks at each attempt once,
    when the step after its last step has arrived (and its last step is finished): keep one
    per shown run, and start a new one when its steps are replaced (another run, its record)."""

    def __init__(self) -> None:
        self._end = 0  # steps[:end] are looked at: the next attempt starts at end
        self._attempts = array("q")  # attempt numbers of ``_left``, ascending
        self._left: list[_Left] = []
        self.visited = 0  # attempts looked at, ever (the tests count them)

    def update(
        self,
        steps: Sequence[Step | None],
        started: Sequence[Started] | None = None,
        upto: int = -1,
    ) -> None:
        """Takes in the attempts ended among the first ``upto`` steps (all when -1) since the
        last call. ``steps``: each step's final ``Step``, None while pending (a run's
        ``finals``); ``started``: the same steps as they started, read for their attempt and
        request (a run's ``LiveStep`` list; default ``steps``)."""
        # A final Step is a Started too; without ``started``, a None step is never read.
        begun = cast(Sequence[Started], steps if started is None else started)
        end = len(begun) if upto < 0 else min(upto, len(begun))
        done = self._end  # steps[:done] are looked at (locals in the loop: ~1 µs an attempt)
        looked, attempts, left = 0, self._attempts, self._left
        try:
            while end - done > 1:
                # The next attempt's last step: the next one (one-step attempts), else a
                # bisection (an attempt of 100,000 steps costs one); looked at once there is a
                # step after it.
                number = begun[done].attempt
                at = done
                if begun[done + 1].attempt == number:
                    at = bisect_right(begun, number, done, end, key=_attempt) - 1
                    if at == end - 1:
                        return
                failed = steps[at]
                if failed is None or failed.status == "pending":
                    return  # not final yet: looked at on a later call
                after = steps[at + 1]
                seen = (begun[at + 1] if after is None else after).request.messages
                done = at + 1
                looked += 1
                try:  # a request ending in a user message not the feedback: nothing left
                    last = seen[-1]
                except IndexError:
                    pass
                else:
                    if last.role == "user":
                        feedback = failed.feedback
                        if not (feedback and _same(last, feedback[-1])):
                            continue  # the usual blind retry (_failure_marks: {}, slower)
                marks = _failure_marks(failed, seen)
                if marks:
                    attempts.append(failed.attempt)
                    left.append(_Left(failed, seen, marks))
        finally:
            self._end = done
            self.visited += looked

    def before(self, attempt: int) -> list[_Left]:
        """What the attempts before ``attempt`` left, oldest first."""
        return self._left[: bisect_left(self._attempts, attempt)]


def request_marks(
    steps: Sequence[Step],
    index: int,
    policy: Policy | None = None,
    failures: FailureIndex | None = None,
) -> RequestMarks:
    """The marks of step ``index``'s request (1-based) in ``steps``, the run's steps in order;
    ``failures``: the run's index, brought up to date here (else one is built)."""
    step = steps[index - 1]
    messages = step.request.messages
    failures = FailureIndex() if failures is None else failures
    failures.update(steps, upto=index)
    badges: dict[int, list[Badge]] = {}
    claimed: set[int] = set()
    # Newest attempt first: a position is the latest failed attempt's when two would match.
    for _failed, seen, left in reversed(failures.before(step.attempt)):
        for position, found in left.items():
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
