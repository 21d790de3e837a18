"""Validators judge a candidate output (DESIGN §3 ``[[validators]]``) and yield verdicts.

A validator never crashes a run: one that raises or runs past its time limit yields a verdict with
status ``error`` carrying the exception's last line (and, for a python validator, the line of its
file where it raised). Python validators run in a worker process (``inspector.core.worker``):
one that hangs, exits, crashes or runs out of memory is killed and judges ``error`` saying so,
and what it printed is kept on its verdict (``captured``). A returned ``Verdict`` belongs to the
validator that returned it (its name is the validator's) and must agree with itself (``ok`` and
``status``). Re-validation compiles ``tolerant``: a python validator whose file does not load (a
syntax error mid-edit) judges every output ``error`` instead of stopping the re-validation, and
one that timed out or ended its worker is not called again (its later verdicts are ``error`` at
once).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from inspector.core.errors import ScenarioError, last_line
from inspector.core.loading import ModuleLoadError
from inspector.core.messages import Message, content_text
from inspector.core.policy import MAX_COUNT
from inspector.core.records import SourceLocation, Verdict
from inspector.core.regex_limits import IGNORECASE, compile_pattern
from inspector.core.schema import schema_errors, schema_problem
from inspector.core.worker import pool
from inspector.core.worker.contexts import ValidatorContext
from inspector.core.worker.protocol import Reply, Target

if TYPE_CHECKING:  # imported when a regex validator is compiled (``compile_pattern``)
    import regex

When = Literal["final", "every_step"]


class _Spec(BaseModel):
    # Numbers as text, strict counts and flags: the one rule of docs/engine.md "Values".
    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        serialize_by_alias=True,
        coerce_numbers_to_str=True,
    )

    name: str | None = None
    feedback: str | None = None
    when: When = "final"  # "every_step": also judges tool-call steps (and may stop() the loop)
    field: str | None = None  # dotted path into a structured output; the whole output otherwise


class NonEmpty(_Spec):
    kind: Literal["non_empty"]


class MaxLength(_Spec):
    kind: Literal["max_length"]
    max: int = Field(ge=0, le=MAX_COUNT, strict=True)


class MinLength(_Spec):
    kind: Literal["min_length"]
    min: int = Field(ge=0, le=MAX_COUNT, strict=True)


class RegexAbsent(_Spec):
    kind: Literal["regex_absent"]
    pattern: str
    ignore_case: bool = Field(False, strict=True)


class RegexPresent(_Spec):
    kind: Literal["regex_present"]
    pattern: str
    ignore_case: bool = Field(False, strict=True)


class JsonSchema(_Spec):
    kind: Literal["json_schema"]
    json_schema: dict[str, Any] = Field(alias="schema")


class CallsTool(_Spec):
    kind: Literal["calls_tool"]
    tool: str


class Python(_Spec):
    kind: Literal["python"]
    function: str


ValidatorSpec = Annotated[
    NonEmpty | MaxLength | MinLength | RegexAbsent | RegexPresent | JsonSchema | CallsTool | Python,
    Field(discriminator="kind"),
]


@dataclass
class ValidationContext:
    """The engine's side of a validator's ``ctx``: ``attempt`` (1-based), ``step`` (index),
    ``history`` (the messages the model saw, as dicts) and ``stop()``. A python validator gets
    ``for_user()``, a plain copy its worker can read; its ``stop()`` comes back here."""

    attempt: int
    step: int
    messages: Sequence[Message] = ()
    pending_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    scenario: str = ""
    stopped: bool = False

    @cached_property
    def history(self) -> list[dict[str, Any]]:
        return [m.model_dump() for m in self.messages]

    def stop(self) -> None:
        """End the loop after this step, even with pending tool calls."""
        self.stopped = True

    def for_user(self) -> ValidatorContext:
        return ValidatorContext(
            self.attempt, self.step, self.history, self.pending_tool_calls, self.scenario
        )


def contradiction(verdict: Verdict) -> str | None:
    """Why a returned ``Verdict``'s fields disagree (``ok`` says one thing, ``status`` another),
    or None."""
    if verdict.ok != (verdict.status == "pass"):
        return (
            "returned a Verdict whose fields disagree: "
            f"ok={verdict.ok} but status={verdict.status!r}"
        )
    return None


class MissingField(LookupError):
    """A validator's ``field`` is not in the output (a typo must not pass silently)."""


def _field_value(output: Any, path: str | None) -> Any:
    if not path:
        return output
    node = output
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise MissingField(f"field {path!r} is not in the output")
    return node


class Validator:
    """One compiled validator: regexes compiled and functions loaded once, not per verdict."""

    def __init__(
        self,
        spec: _Spec,
        name: str,
        base_dir: Path,
        timeout_s: float,
        where: str = "validator",
        tool_names: Collection[str] | None = None,
        *,
        tolerant: bool = False,
    ) -> None:
        """``where`` names the validator in errors: ``"scenario.toml: validators[1]"``.
        ``tolerant``: a python function that cannot be loaded makes every verdict ``error``
        (with the load error) instead of raising ``ScenarioError``; after a call timed out,
        every later verdict is ``error`` without a call."""
        self.spec = spec
        self.name = name
        self.timeout_s = timeout_s
        self._tolerant = tolerant
        self._regex: regex.Pattern[str] | None = None
        self._target: Target | None = None  # a python validator's function, run in a worker
        self.broken: str | None = None  # why the python function could not be loaded
        self._broken_at: SourceLocation | None = None  # where, when known
        if isinstance(spec, RegexAbsent | RegexPresent):
            flags = IGNORECASE if spec.ignore_case else 0
            self._regex = compile_pattern(spec.pattern, flags, where)
        if isinstance(spec, JsonSchema):
            problem = schema_problem(spec.json_schema)
            if problem:
                raise ScenarioError(f"{where}.schema: not a valid JSON Schema: {problem}")
        if isinstance(spec, CallsTool) and tool_names is not None and spec.tool not in tool_names:
            known = ", ".join(sorted(tool_names)) or "none"
            raise ScenarioError(f"{where}.tool: no tool {spec.tool!r} (tools: {known})")
        if isinstance(spec, Python):
            self._target = Target(spec.function, str(base_dir), f"{where}.function")
            try:
                pool.check([self._target])  # imported in a worker, never in this process
            except ScenarioError as exc:
                if not tolerant:
                    raise
                self.broken = str(exc)
                if isinstance(exc, ModuleLoadError) and exc.file and exc.line:
                    self._broken_at = SourceLocation(file=exc.file, line=exc.line)

    def _fail(self, reason: str, default_feedback: str) -> Verdict:
        return Verdict.failed(self.name, reason, self.spec.feedback or default_feedback)

    def _builtin(self, output: Any, ctx: ValidationContext) -> Verdict:
        spec = self.spec
        text = content_text(_field_value(output, spec.field))
        if isinstance(spec, NonEmpty):
            if text.strip():
                return Verdict.passed(self.name)
            return self._fail("empty output", "Your answer was empty. Answer the user.")
        if isinstance(spec, MaxLength):
            if len(text) <= spec.max:
                return Verdict.passed(self.name, f"{len(text)} ≤ {spec.max} characters")
            return self._fail(
                f"{len(text)} characters > {spec.max}",
                f"Keep the answer to at most {spec.max} characters (it had {len(text)}).",
            )
        if isinstance(spec, MinLength):
            if len(text) >= spec.min:
                return Verdict.passed(self.name, f"{len(text)} ≥ {spec.min} characters")
            return self._fail(
                f"{len(text)} characters < {spec.min}",
                f"Write at least {spec.min} characters (it had {len(text)}).",
            )
        if isinstance(spec, RegexAbsent):
            assert self._regex is not None
            # `regex`, not `re`: it bounds a pathological pattern by time (TimeoutError).
            m = self._regex.search(text, timeout=self.timeout_s)
            if m is None:
                return Verdict.passed(self.name)
            return self._fail(
                f"found {m.group(0)!r} at {m.start()}",
                f"The answer must not contain {m.group(0)!r}.",
            )
        if isinstance(spec, RegexPresent):
            assert self._regex is not None
            if self._regex.search(text, timeout=self.timeout_s):
                return Verdict.passed(self.name)
            return self._fail(
                f"no match for {spec.pattern!r}",
                f"The answer must match the pattern {spec.pattern!r}.",
            )
        if isinstance(spec, JsonSchema):
            value = _field_value(output, spec.field)  # MissingField: an error verdict
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except json.JSONDecodeError as exc:
                    return self._fail(f"not JSON: {exc.msg}", "Answer with valid JSON only.")
            problems = schema_errors(spec.json_schema, value)
            if not problems:
                return Verdict.passed(self.name)
            return self._fail(problems[0], f"The answer does not match the schema: {problems[0]}")
        if isinstance(spec, CallsTool):
            called = any(
                call.name == spec.tool
                for m in ctx.messages
                if m.role == "assistant" and m.tool_calls
                for call in m.tool_calls
            ) or any(c.get("name") == spec.tool for c in ctx.pending_tool_calls)
            if called:
                return Verdict.passed(self.name)
            return self._fail(
                f"tool {spec.tool!r} was not called",
                f"Call the {spec.tool} tool before answering.",
            )
        raise AssertionError(f"unhandled validator kind {type(spec).__name__}")

    def _from_return(self, value: Any) -> Verdict:
        if value is None or value is True:
            return Verdict.passed(self.name)
        if value is False:
            return self._fail("returned False", f"The answer failed the check {self.name}.")
        if isinstance(value, str):
            return Verdict.failed(self.name, value, value)
        if isinstance(value, Verdict):
            problem = contradiction(value)
            if problem is not None:
                return Verdict.errored(self.name, problem)
            return value.model_copy(update={"validator": self.name})  # ours, whatever it says
        return Verdict.errored(
            self.name, f"returned {type(value).__name__}; expected None, bool, str or Verdict"
        )

    def _before_call(self, output: Any, ctx: ValidationContext) -> Verdict | Any:
        """The verdict when no user code needs to run (broken, a built-in, a missing field),
        else the value the python function gets."""
        if self.broken is not None:
            return Verdict.errored(self.name, self.broken, self._broken_at)
        try:
            if self._target is None:
                return self._builtin(output, ctx)  # bounded: regexes carry their own timeout
            return _field_value(output, self.spec.field)
        except TimeoutError:  # a regex search past the time limit
            return Verdict.errored(self.name, f"timed out after {self.timeout_s:g} s")
        except MissingField as exc:
            return Verdict.errored(self.name, str(exc))
        except Exception as exc:  # a bug of a built-in: still only a verdict
            return Verdict.errored(self.name, last_line(exc))

    async def judge(self, output: Any, ctx: ValidationContext) -> Verdict:
        value = self._before_call(output, ctx)
        if isinstance(value, Verdict) or self._target is None:
            return value
        reply = await pool.call(self._target, (value, ctx.for_user()), {}, self.timeout_s)
        return self._from_reply(reply, ctx)

    async def judge_many(self, judged: Sequence[tuple[Any, ValidationContext]]) -> list[Verdict]:
        """``judge`` of each (output, ctx), in order; a python function's calls go to its
        worker in batches (``pool.call_many``), so thousands of outputs cost a few round
        trips. Re-validation's way: a validator judges every output before the next does."""
        verdicts: list[Verdict | None] = []
        calls: list[tuple[int, ValidationContext, tuple[tuple[Any, ...], dict[str, Any]]]] = []
        for output, ctx in judged:
            value = self._before_call(output, ctx)
            if isinstance(value, Verdict) or self._target is None:
                verdicts.append(value)
            else:
                calls.append((len(verdicts), ctx, ((value, ctx.for_user()), {})))
                verdicts.append(None)
        if calls and self._target is not None:
            items = [item for _, _, item in calls]
            replies = await pool.call_many(
                self._target, items, self.timeout_s, stop_when_ended=self._tolerant
            )
            for (at, ctx, _), reply in zip(calls, replies, strict=False):
                verdicts[at] = self._from_reply(reply, ctx)
            for at, _, _ in calls[len(replies) :]:  # left out after a call ended its worker
                verdicts[at] = Verdict.errored(
                    self.name, self.broken or "not called", self._broken_at
                )
        return [v for v in verdicts if v is not None]

    def _from_reply(self, reply: Reply, ctx: ValidationContext) -> Verdict:
        if reply.error is None:
            if reply.stopped:
                ctx.stop()
            verdict = self._from_return(reply.value)
        else:
            at = (
                SourceLocation(file=reply.file, line=reply.line)
                if reply.file and reply.line
                else None
            )
            verdict = Verdict.errored(self.name, reply.error, at)
            if self._tolerant and reply.ended:
                # Killing and restarting a worker per output would make re-judging hundreds of
                # outputs take minutes: one such call is enough to say what is wrong.
                self.broken = f"{reply.error} on an earlier output: not called again"
        if reply.captured:
            verdict = verdict.model_copy(update={"captured": reply.captured})
        return verdict


def _spec_name(spec: _Spec) -> str:
    if spec.name:
        return spec.name
    if isinstance(spec, Python):
        return spec.function.rpartition(":")[2]
    return str(getattr(spec, "kind", "validator"))


def compile_validators(
    specs: Sequence[_Spec],
    base_dir: Path,
    timeout_s: float = 5.0,
    *,
    source: str = "<scenario>",
    tool_names: Collection[str] | None = None,
    tolerant: bool = False,
) -> list[Validator]:
    """Names are unique within a scenario (a repeated one gets ``#2``, ``#3``...). Errors name
    the scenario file and the validator's field: ``scenario.toml: validators[1].function: ...``.
    ``tolerant``: see ``Validator`` (python functions that do not load judge ``error``)."""
    seen: dict[str, int] = {}
    out: list[Validator] = []
    for i, spec in enumerate(specs):
        base = _spec_name(spec)
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        where = f"{source}: validators[{i}]"
        out.append(Validator(spec, name, base_dir, timeout_s, where, tool_names, tolerant=tolerant))
    return out


async def judge_all(
    validators: Sequence[Validator], output: Any, ctx: ValidationContext, *, when: When = "final"
) -> list[Verdict]:
    """Runs the validators that apply (``when="every_step"`` selects only those), in order."""
    chosen = [v for v in validators if when == "final" or v.spec.when == "every_step"]
    return [await v.judge(output, ctx) for v in chosen]
