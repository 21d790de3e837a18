"""The proxy's pure rules, each alone: grouping calls into runs and attempts, how steps and runs
end, reading request bodies, decoding SSE split anywhere."""

from __future__ import annotations

import pytest

from inspector.core.messages import Message, ToolCall, assistant, system, tool_result, user
from inspector.core.records import Step, StepRequest, StepResponse, Verdict
from inspector.proxy.grouping import OpenRun, keys_of, message_key, place
from inspector.proxy.normalize import read_request
from inspector.proxy.outcome import run_outcome, step_status
from inspector.proxy.sse import SSEDecoder
from inspector.proxy.upstream import RUN_HEADER, Upstreams, api_of, request_headers

CALL = ToolCall(id="call_1", name="lookup", arguments={"q": "x"})


def run(
    run_id: str,
    sent: list[Message],
    reply: Message | None,
    *,
    final: bool = False,
    header: str | None = None,
    busy: bool = False,
    seen: float = 0.0,
) -> OpenRun:
    key = message_key(reply) if reply is not None else None
    return OpenRun(run_id, header, keys_of("", sent), key, final, busy, seen)


def placed(messages: list[Message], runs: list[OpenRun], header: str | None = None) -> tuple:
    p = place(keys_of("", messages), messages, header, runs)
    return p.run_id, p.new_attempt, p.added


def test_a_first_call_starts_a_run() -> None:
    assert placed([user("hi")], []) == (None, False, 0)


def test_sending_the_history_back_with_a_tool_result_continues_the_run() -> None:
    a = run("a", [user("hi")], assistant(tool_calls=(CALL,)))
    follow = [user("hi"), assistant(tool_calls=(CALL,)), tool_result("call_1", "42")]
    assert placed(follow, [a]) == ("a", False, 1)


def test_a_new_message_after_a_final_answer_is_a_new_attempt() -> None:
    a = run("a", [user("hi")], assistant("**Hi**"), final=True)
    retry = [user("hi"), assistant("**Hi**"), system("note"), user("No markdown.")]
    assert placed(retry, [a]) == ("a", True, 2)


def test_a_reply_sent_back_differently_serialised_still_matches() -> None:
    # Clients resend null content as "" and re-serialise arguments: ids and text decide.
    a = run("a", [user("hi")], assistant(None, (CALL,)))
    resent = Message(
        role="assistant",
        content="",
        tool_calls=(CALL.model_copy(update={"arguments": '{"q":"x"}'}),),
    )
    assert placed([user("hi"), resent, tool_result("call_1", "42")], [a])[0] == "a"


def test_a_different_conversation_or_reply_starts_a_run() -> None:
    a = run("a", [user("hi")], assistant("Hello"), final=True)
    assert placed([user("hello")], [a])[0] is None
    assert placed([user("hi"), assistant("Other"), user("?")], [a])[0] is None
    assert placed([user("hi")], [a])[0] is None  # the same opening, a new conversation


def test_the_retry_of_a_failed_call_joins_its_run() -> None:
    a = run("a", [user("hi")], None)
    assert placed([user("hi")], [a]) == ("a", False, 0)


def test_the_longest_history_wins_then_the_latest_run() -> None:
    short = run("short", [user("hi")], assistant(tool_calls=(CALL,)), seen=5)
    long_ = run("long", [user("hi"), assistant(tool_calls=(CALL,)), tool_result("call_1", "1")],
                assistant("done"), final=True, seen=1)  # fmt: skip
    later = run("later", [user("hi")], assistant(tool_calls=(CALL,)), seen=9)
    history = [user("hi"), assistant(tool_calls=(CALL,)), tool_result("call_1", "1")]
    assert placed([*history, assistant("done"), user("more")], [short, long_, later])[0] == "long"
    assert placed(history, [short, later])[0] == "later"


def test_busy_runs_and_header_runs_are_not_continued_by_history() -> None:
    a = run("a", [user("hi")], assistant(tool_calls=(CALL,)), busy=True)
    b = run("b", [user("hi")], assistant(tool_calls=(CALL,)), header="k")
    follow = [user("hi"), assistant(tool_calls=(CALL,)), tool_result("call_1", "1")]
    assert placed(follow, [a, b])[0] is None


def test_the_run_header_decides() -> None:
    a = run("a", [user("hi")], assistant("Hello"), final=True, header="k")
    assert placed([user("unrelated")], [a], header="k") == ("a", False, 0)
    assert placed([user("hi"), assistant("Hello"), user("again")], [a], header="k") == (
        "a",
        True,
        1,
    )
    assert placed([user("hi")], [a], header="other")[0] is None


def test_the_system_prompt_is_part_of_the_conversation() -> None:
    a = OpenRun("a", None, keys_of("You are A.", [user("hi")]), message_key(assistant("x")),
                True, False, 0)  # fmt: skip
    messages = [user("hi"), assistant("x"), user("y")]
    assert place(keys_of("You are B.", messages), messages, None, [a]).run_id is None
    assert place(keys_of("You are A.", messages), messages, None, [a]).run_id == "a"


# ---- how steps and runs end -----------------------------------------------------------------


def verdict(ok: bool) -> Verdict:
    return Verdict.passed("v") if ok else Verdict.failed("v", "no")


@pytest.mark.parametrize(
    ("response", "verdicts", "rejected", "status"),
    [
        (StepResponse(text="hi"), [], False, "success"),
        (StepResponse(text="hi"), [verdict(True)], True, "failed_validation"),
        (StepResponse(text="hi"), [verdict(False)], False, "failed_validation"),
        (StepResponse(text="  "), [], False, "empty"),
        (StepResponse(tool_calls=[CALL]), [], False, "success"),
        (StepResponse(refusal="no"), [], False, "success"),
    ],
)
def test_step_status(
    response: StepResponse, verdicts: list[Verdict], rejected: bool, status: str
) -> None:
    assert step_status(response, verdicts, rejected) == status


def step(index: int, status: str, response: StepResponse | None, error: str | None = None) -> Step:
    request = StepRequest(system="", messages=[user("hi")])
    return Step.model_validate(
        {"index": index, "attempt": 1, "status": status, "request": request,
         "response": response, "error": error}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("last", "outcome"),
    [
        (step(2, "success", StepResponse(text="ok")), ("succeeded", "stop")),
        (step(2, "failed_validation", StepResponse(text="ok")), ("failed", "validator_exhausted")),
        (step(2, "empty", StepResponse()), ("failed", "empty_final")),
        (step(2, "success", StepResponse(refusal="no")), ("failed", "refusal")),
        (step(2, "success", StepResponse(tool_calls=[CALL])), ("failed", None)),
        (step(2, "error", None, "HTTP 500"), ("error", "provider_error")),
        (step(2, "cancelled", None, "gone"), ("cancelled", "cancelled")),
    ],
)
def test_a_run_ends_by_its_last_step(last: Step, outcome: tuple[str, str | None]) -> None:
    first = step(1, "error", None, "HTTP 429")
    status, termination, error = run_outcome([first, last])
    assert (status, termination) == outcome
    assert (error is None) == (status in ("succeeded", "failed") and termination is not None)


def test_a_run_ending_after_a_tool_call_says_the_client_stopped() -> None:
    _, _, error = run_outcome([step(1, "success", StepResponse(tool_calls=[CALL]))])
    assert error is not None and "no further call after the tool call(s) of step 1" in error.message


# ---- reading request bodies -----------------------------------------------------------------


def test_an_anthropic_request_reads_as_the_engines_shape() -> None:
    body = {
        "model": "claude",
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "tu_1", "name": "get", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu_1",
                 "content": [{"type": "text", "text": "sunny"}]},
                {"type": "text", "text": "thanks"},
            ]},
        ],
        "tools": [{"name": "get", "description": "d", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"},
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
    }  # fmt: skip
    request = read_request("anthropic", body)
    assert request is not None
    assert request.system == "Be brief."
    assert [(m.role, m.content) for m in request.messages] == [
        ("user", "weather?"), ("assistant", "Looking."), ("tool", "sunny"), ("user", "thanks"),
    ]  # fmt: skip
    assert request.messages[1].tool_calls == (
        ToolCall(id="tu_1", name="get", arguments={"city": "Paris"}),
    )
    assert request.messages[2].tool_call_id == "tu_1"
    assert [t.name for t in request.tools] == ["get"]
    assert request.tool_choice == "required"
    assert request.response_format == {
        "type": "json_schema", "json_schema": {"name": "output", "schema": {"type": "object"}},
    }  # fmt: skip


def test_chat_content_parts_are_read_as_their_text() -> None:
    body = {"messages": [{"role": "developer", "content": "sys"}, {"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}  # fmt: skip
    request = read_request("openai", body)
    assert request is not None and request.system == "sys"
    assert [m.content for m in request.messages] == ["ab"]


@pytest.mark.parametrize("body", [[], "x", {"messages": [{"role": "wizard"}]}, {"messages": 3}])
def test_a_body_that_is_no_request_reads_as_none(body: object) -> None:
    assert read_request("openai", body) is None


# ---- SSE --------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_sse_decodes_the_same_whatever_the_chunking(size: int) -> None:
    raw = (
        'event: message_start\r\ndata: {"a": 1}\r\n\r\n'
        ": keep-alive\n\ndata: é line 1\ndata: line 2\n\n"
        "data:no-space\r\r"
    ).encode()
    decoder = SSEDecoder()
    events = [e for i in range(0, len(raw), size) for e in decoder.feed(raw[i : i + size])]
    assert events == [
        ("message_start", '{"a": 1}'),
        ("message", "é line 1\nline 2"),
        ("message", "no-space"),
    ]


# ---- routing and headers ----------------------------------------------------------------------


def test_the_proxys_v1_maps_onto_each_upstream() -> None:
    upstreams = Upstreams("https://api.openai.com/v1/", "http://127.0.0.1:9/anthropic/v1")
    assert upstreams.url("openai", "/v1/chat/completions", "") == (
        "https://api.openai.com/v1/chat/completions"
    )
    assert upstreams.url("anthropic", "/v1/messages", "beta=true") == (
        "http://127.0.0.1:9/anthropic/v1/messages?beta=true"
    )
    assert upstreams.url("openai", "/health", "") == "https://api.openai.com/v1/health"


def test_anthropic_calls_are_known_by_path_or_version_header() -> None:
    assert api_of("/v1/messages", {}) == "anthropic"
    assert api_of("/v1/models", {"anthropic-version": "2023-06-01"}) == "anthropic"
    assert api_of("/v1/models", {}) == "openai"


def test_hop_by_hop_headers_go_and_a_key_is_added_only_when_the_client_has_none() -> None:
    upstreams = Upstreams(keys={"openai": "sk-env", "anthropic": "sk-ant-env"})
    sent = [("Host", "127.0.0.1:8765"), ("Connection", "keep-alive"), ("Content-Length", "9"),
            (RUN_HEADER, "task"), ("Accept", "*/*")]  # fmt: skip
    assert request_headers("openai", sent, upstreams) == [
        ("Accept", "*/*"),
        ("authorization", "Bearer sk-env"),
    ]
    assert request_headers("anthropic", sent, upstreams)[-1] == ("x-api-key", "sk-ant-env")
    own = [("Authorization", "Bearer sk-client")]
    assert request_headers("openai", own, upstreams) == own
    assert request_headers("openai", sent, Upstreams()) == [("Accept", "*/*")]
