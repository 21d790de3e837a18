"""B1 as pure functions: the feedback text, the block a failed attempt leaves behind and the
history the next attempt sees, for every feedback_history × feedback_role × keep_failed_attempts."""

from __future__ import annotations

import pytest

from inspector.core.history import (
    DEFAULT_FEEDBACK,
    FEEDBACK_TOOL,
    NOT_EXECUTED,
    REJECTED,
    FailedAttempt,
    Work,
    compose_history,
    failed_attempt,
    feedback_text,
)
from inspector.core.messages import Message, ToolCall, assistant, system, tool_result, user
from inspector.core.policy import Policy
from inspector.core.records import Verdict

FB1, FB2 = "No asterisks.", "No underscores."


def policy(history: str = "accumulate", role: str = "user", keep: bool = True) -> Policy:
    return Policy.model_validate(
        {"feedback_history": history, "feedback_role": role, "keep_failed_attempts": keep}
    )


def final_call(n: int, body: str) -> ToolCall:
    return ToolCall(id=f"fa{n}", name="final_answer", arguments={"body": body})


def feedback_call(attempt: int, name: str = FEEDBACK_TOOL) -> ToolCall:
    return ToolCall(id=f"feedback_{attempt}", name=name, arguments={})


def feedback_pair(attempt: int, text: str) -> tuple[Message, Message]:
    """The synthetic call + result that carry tool-role feedback when no candidate is shown."""
    return assistant(None, (feedback_call(attempt),)), feedback_result(attempt, text)


def feedback_result(attempt: int, text: str, name: str = FEEDBACK_TOOL) -> Message:
    return tool_result(f"feedback_{attempt}", text, name)


# ---- feedback_text ---------------------------------------------------------------------------


def test_feedback_text_joins_failing_feedback_in_order_without_duplicates() -> None:
    verdicts = [
        Verdict.failed("no_bold", "found '*' at 0", FB1),
        Verdict.passed("short", "12 ≤ 160 characters"),
        Verdict.failed("no_italic", "found '_' at 3", FB2),
        Verdict.failed("no_bold#2", "found '*' at 9", FB1),  # same text: once
        Verdict.failed("python_check", "too formal"),  # no feedback: its reason stands in
        Verdict.errored("flaky", "ValueError: boom"),  # a broken validator adds nothing
    ]
    assert feedback_text(verdicts) == "No asterisks.\nNo underscores.\ntoo formal"


@pytest.mark.parametrize(
    "verdicts",
    [
        [],
        [Verdict.passed("a")],
        [Verdict.errored("flaky", "TimeoutError"), Verdict.errored("slow", "timed out after 1 s")],
        [Verdict(validator="blank", ok=False, status="fail", reason="", feedback="")],
    ],
    ids=["none", "only-passes", "only-errors", "blank-failure"],
)
def test_feedback_text_defaults_when_no_failure_says_anything(verdicts: list[Verdict]) -> None:
    assert feedback_text(verdicts) == DEFAULT_FEEDBACK
    assert DEFAULT_FEEDBACK == "Your previous answer was rejected. Try again."


# ---- failed_attempt: one block -----------------------------------------------------------------

FA1 = final_call(1, "**Sam**")
TEXT = assistant("**Sam**, 3pm.")
TOOL = assistant(None, (FA1,))
LOOKUP = ToolCall(id="lk1", name="lookup_contact", arguments={"name": "Sam"})
MIXED = assistant("Checking.", (LOOKUP, FA1))
FA1_REJECTED = tool_result("fa1", REJECTED, "final_answer")
FA1_FEEDBACK = tool_result("fa1", FB1, "final_answer")
LOOKUP_NOT_EXECUTED = tool_result("lk1", NOT_EXECUTED, "lookup_contact")
LOOKUP_REJECTED = tool_result("lk1", REJECTED, "lookup_contact")
LOOKING = assistant("Checking.", (LOOKUP,))  # tool calls, none of them judged
# A kept plain-text candidate under tool-role feedback: one message, its text and the call.
TEXT_WITH_FEEDBACK_CALL = assistant("**Sam**, 3pm.", (feedback_call(1),))


@pytest.mark.parametrize(
    ("role", "keep", "candidate", "judged", "expected_candidate", "expected_feedback"),
    [
        # plain text candidate
        ("user", True, TEXT, None, (TEXT,), (user(FB1),)),
        ("user", False, TEXT, None, (TEXT,), (user(FB1),)),
        ("system", True, TEXT, None, (TEXT,), (system(FB1),)),
        ("system", False, TEXT, None, (TEXT,), (system(FB1),)),
        ("tool", True, TEXT, None, (TEXT_WITH_FEEDBACK_CALL,), (feedback_result(1, FB1),)),
        ("tool", False, TEXT, None, (TEXT,), feedback_pair(1, FB1)),
        # final_answer tool call (tool output mode): every call of the candidate gets a result
        ("user", True, TOOL, FA1, (TOOL, FA1_REJECTED), (user(FB1),)),
        ("system", True, TOOL, FA1, (TOOL, FA1_REJECTED), (system(FB1),)),
        ("tool", True, TOOL, FA1, (TOOL,), (FA1_FEEDBACK,)),
        # not kept: the model never sees the call, so the feedback cannot be its result
        ("tool", False, TOOL, FA1, (TOOL, FA1_REJECTED), feedback_pair(1, FB1)),
        # a user tool call next to the final answer never ran, and its result says so
        ("tool", True, MIXED, FA1, (MIXED,), (LOOKUP_NOT_EXECUTED, FA1_FEEDBACK)),
        ("user", True, MIXED, FA1, (MIXED, LOOKUP_NOT_EXECUTED, FA1_REJECTED), (user(FB1),)),
        # a kept candidate with calls but none judged: the feedback call joins its calls
        (
            "tool",
            True,
            LOOKING,
            None,
            (assistant("Checking.", (LOOKUP, feedback_call(1))),),
            (LOOKUP_REJECTED, feedback_result(1, FB1)),
        ),
        # an empty reply leaves no candidate, only feedback
        ("user", True, None, None, (), (user(FB1),)),
        ("system", False, None, None, (), (system(FB1),)),
        ("tool", True, None, None, (), feedback_pair(1, FB1)),
    ],
)
def test_failed_attempt_block(
    role: str,
    keep: bool,
    candidate: Message | None,
    judged: ToolCall | None,
    expected_candidate: tuple[Message, ...],
    expected_feedback: tuple[Message, ...],
) -> None:
    for history in ("accumulate", "latest"):
        block = failed_attempt(1, candidate, judged, FB1, policy(history, role, keep))
        assert block == FailedAttempt(
            attempt=1, candidate=expected_candidate, feedback=expected_feedback
        )


@pytest.mark.parametrize("role", ["user", "system", "tool"])
@pytest.mark.parametrize("keep", [True, False])
def test_failed_attempt_without_feedback(role: str, keep: bool) -> None:
    p = policy("none", role, keep)
    assert failed_attempt(2, TEXT, None, FB1, p) == FailedAttempt(2, (TEXT,), ())
    assert failed_attempt(2, TOOL, FA1, FB1, p) == FailedAttempt(2, (TOOL, FA1_REJECTED), ())
    assert failed_attempt(2, MIXED, FA1, FB1, p) == FailedAttempt(
        2, (MIXED, LOOKUP_NOT_EXECUTED, FA1_REJECTED), ()
    )
    assert failed_attempt(2, None, None, FB1, p) == FailedAttempt(2, (), ())


@pytest.mark.parametrize("keep", [True, False])
def test_synthetic_feedback_ids_follow_the_attempt(keep: bool) -> None:
    block = failed_attempt(3, TEXT, None, FB2, policy(role="tool", keep=keep))
    call = {"id": "feedback_3", "name": "validation_feedback", "arguments": {}}
    result = {
        "role": "tool",
        "content": "No underscores.",
        "tool_call_id": "feedback_3",
        "name": "validation_feedback",
    }
    if keep:  # one assistant message: the rejected text and the call the feedback answers
        assert [m.model_dump(mode="json") for m in block.candidate] == [
            {"role": "assistant", "content": "**Sam**, 3pm.", "tool_calls": [call]}
        ]
        assert [m.model_dump(mode="json") for m in block.feedback] == [result]
    else:
        assert block.candidate == (TEXT,)
        assert [m.model_dump(mode="json") for m in block.feedback] == [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            result,
        ]


@pytest.mark.parametrize("keep", [True, False])
def test_synthetic_feedback_tool_is_renamed_on_collision(keep: bool) -> None:
    taken = {"validation_feedback", "validation_feedback_1", "lookup_contact"}
    block = failed_attempt(1, TEXT, None, FB1, policy(role="tool", keep=keep), taken)
    name = "validation_feedback_2"
    call = feedback_call(1, name)
    if keep:
        assert block == FailedAttempt(
            1, (assistant("**Sam**, 3pm.", (call,)),), (feedback_result(1, FB1, name),)
        )
    else:
        assert block == FailedAttempt(
            1, (TEXT,), (assistant(None, (call,)), feedback_result(1, FB1, name))
        )
    # without a collision the reserved name stands
    plain = failed_attempt(1, None, None, FB1, policy(role="tool"), {"lookup_contact"})
    assert plain.feedback == feedback_pair(1, FB1)


# ---- compose_history: the whole next history --------------------------------------------------
#
# prefix Q, then blocks [failed attempt 1, work W (a tool round trip), failed attempt 2].
# Tokens: C = candidate, X = "Rejected by validation." result pairing a candidate's call,
# U/S = user/system feedback, P+R = synthetic validation_feedback call + result,
# M = a text candidate carrying the validation_feedback call itself (answered by R),
# J = the final_answer call's own result carrying the feedback.

Q = user("Tell Sam the meeting moved to 3pm.")
WA = assistant(None, (ToolCall(id="w1", name="lookup_contact", arguments={"name": "Sam"}),))
WR = tool_result("w1", "Sam: +1 555 0100", "lookup_contact")

TOKENS: dict[str, dict[str, Message]] = {}
for kind in ("text", "tool"):
    tokens = {"Q": Q, "Wa": WA, "Wr": WR}
    for n, fb in ((1, FB1), (2, FB2)):
        if kind == "text":
            tokens[f"C{n}"] = assistant(f"**answer {n}**")
            tokens[f"M{n}"] = assistant(f"**answer {n}**", (feedback_call(n),))
        else:
            tokens[f"C{n}"] = assistant(None, (final_call(n, f"**answer {n}**"),))
            tokens[f"X{n}"] = tool_result(f"fa{n}", REJECTED, "final_answer")
            tokens[f"J{n}"] = tool_result(f"fa{n}", fb, "final_answer")
        tokens[f"U{n}"] = user(fb)
        tokens[f"S{n}"] = system(fb)
        tokens[f"P{n}"], tokens[f"R{n}"] = feedback_pair(n, fb)
    TOKENS[kind] = tokens

EXPECTED = {
    # (candidate kind, feedback_history, feedback_role, keep_failed_attempts): next history.
    # "none" is a blind retry: no failed attempt at all, kept or not.
    ("text", "accumulate", "user", True): "Q C1 U1 Wa Wr C2 U2",
    ("text", "accumulate", "user", False): "Q U1 Wa Wr U2",
    ("text", "accumulate", "system", True): "Q C1 S1 Wa Wr C2 S2",
    ("text", "accumulate", "system", False): "Q S1 Wa Wr S2",
    ("text", "accumulate", "tool", True): "Q M1 R1 Wa Wr M2 R2",
    ("text", "accumulate", "tool", False): "Q P1 R1 Wa Wr P2 R2",
    ("text", "latest", "user", True): "Q Wa Wr C2 U2",
    ("text", "latest", "user", False): "Q Wa Wr U2",
    ("text", "latest", "system", True): "Q Wa Wr C2 S2",
    ("text", "latest", "system", False): "Q Wa Wr S2",
    ("text", "latest", "tool", True): "Q Wa Wr M2 R2",
    ("text", "latest", "tool", False): "Q Wa Wr P2 R2",
    ("text", "none", "user", True): "Q Wa Wr",
    ("text", "none", "user", False): "Q Wa Wr",
    ("text", "none", "system", True): "Q Wa Wr",
    ("text", "none", "system", False): "Q Wa Wr",
    ("text", "none", "tool", True): "Q Wa Wr",
    ("text", "none", "tool", False): "Q Wa Wr",
    ("tool", "accumulate", "user", True): "Q C1 X1 U1 Wa Wr C2 X2 U2",
    ("tool", "accumulate", "user", False): "Q U1 Wa Wr U2",
    ("tool", "accumulate", "system", True): "Q C1 X1 S1 Wa Wr C2 X2 S2",
    ("tool", "accumulate", "system", False): "Q S1 Wa Wr S2",
    ("tool", "accumulate", "tool", True): "Q C1 J1 Wa Wr C2 J2",
    ("tool", "accumulate", "tool", False): "Q P1 R1 Wa Wr P2 R2",
    ("tool", "latest", "user", True): "Q Wa Wr C2 X2 U2",
    ("tool", "latest", "user", False): "Q Wa Wr U2",
    ("tool", "latest", "system", True): "Q Wa Wr C2 X2 S2",
    ("tool", "latest", "system", False): "Q Wa Wr S2",
    ("tool", "latest", "tool", True): "Q Wa Wr C2 J2",
    ("tool", "latest", "tool", False): "Q Wa Wr P2 R2",
    ("tool", "none", "user", True): "Q Wa Wr",
    ("tool", "none", "user", False): "Q Wa Wr",
    ("tool", "none", "system", True): "Q Wa Wr",
    ("tool", "none", "system", False): "Q Wa Wr",
    ("tool", "none", "tool", True): "Q Wa Wr",
    ("tool", "none", "tool", False): "Q Wa Wr",
}


def assert_well_formed(messages: list[Message]) -> None:
    """Every tool call is answered by a tool result before the conversation moves on."""
    open_ids: set[str] = set()
    for m in messages:
        if m.role == "tool":
            assert m.tool_call_id in open_ids, m
            open_ids.discard(m.tool_call_id)
            continue
        assert not open_ids, f"unanswered tool calls {open_ids} before {m}"
        open_ids = {c.id for c in m.tool_calls or ()}
    assert not open_ids


@pytest.mark.parametrize(("kind", "history", "role", "keep"), list(EXPECTED))
def test_compose_history(kind: str, history: str, role: str, keep: bool) -> None:
    tokens = TOKENS[kind]
    p = policy(history, role, keep)
    blocks = []
    for n, fb in ((1, FB1), (2, FB2)):
        candidate = tokens[f"C{n}"]
        judged = candidate.tool_calls[0] if candidate.tool_calls else None
        blocks.append(failed_attempt(n, candidate, judged, fb, p))
    blocks.insert(1, Work((WA, WR)))

    got = compose_history([Q], blocks, p)

    assert got == [tokens[t] for t in EXPECTED[kind, history, role, keep].split()]
    assert_well_formed(got)


@pytest.mark.parametrize("history", ["accumulate", "latest", "none"])
def test_compose_history_without_failures_is_prefix_plus_work(history: str) -> None:
    prefix = [system("Be brief."), Q]
    got = compose_history(prefix, [Work((WA, WR))], policy(history))
    assert got == [system("Be brief."), Q, WA, WR]
    assert compose_history(prefix, [], policy(history)) == prefix
    assert compose_history(prefix, [], policy(history)) is not prefix  # a new list


def test_latest_keeps_only_the_most_recent_of_three_attempts() -> None:
    p = policy("latest")
    blocks = [failed_attempt(n, assistant(f"try {n}"), None, f"feedback {n}", p) for n in (1, 2, 3)]
    assert compose_history([Q], blocks, p) == [Q, assistant("try 3"), user("feedback 3")]
    p = policy("accumulate")
    blocks = [failed_attempt(n, assistant(f"try {n}"), None, f"feedback {n}", p) for n in (1, 2, 3)]
    assert compose_history([Q], blocks, p) == [
        Q,
        assistant("try 1"),
        user("feedback 1"),
        assistant("try 2"),
        user("feedback 2"),
        assistant("try 3"),
        user("feedback 3"),
    ]


async def test_accumulate_grows_the_same_list_so_requests_share_it() -> None:
    """The history after a failure extends the one before, in place: a request made before
    the failure stays a view of the same list (what is new is found without a compare)."""
    from inspector.core.history import Conversation
    from inspector.core.shared_list import SharedPrefix

    fail = Verdict.failed("v", "bad", FB1)
    for history, shared in (("accumulate", True), ("latest", False)):
        conversation = Conversation([user("hi")], policy(history))
        before = conversation.messages
        view = SharedPrefix(before, len(before))
        await conversation.add_failure(1, 1, assistant("**no**"), None, [fail])
        assert (conversation.messages is before) is shared
        assert conversation.messages[: len(view)] == list(view)
        assert len(conversation.messages) == 3
