"""The fidelity rules: what an imported run's source did not carry (docs/formats.md).

Each rule is a pure function over the imported calls (``ImportedCall``, see ``assemble``) and
the steps built from them, returning the steps it touches. A run is ``replayable`` when every
request is known as it was sent: its content, system prompt, tools and ``tool_choice``.
Sampling settings, timings, inferred verdicts and missing raw bodies are reported but do not
stop an offline replay (the replay answers from the recording).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from inspector.core.fidelity import Fidelity, FidelityGap, GapKind, ImportFormat
from inspector.core.records import Step

if TYPE_CHECKING:
    from inspector.formats.assemble import ImportedCall

# The validator named on verdicts an importer infers from retry feedback.
INFERRED_VALIDATOR = "retry_feedback"
# The gaps that make a replay's requests differ from the recorded ones.
BLOCKS_REPLAY: frozenset[GapKind] = frozenset(
    {"content", "system_prompt", "tool_definitions", "tool_choice", "request_differs"}
)
DETAIL: dict[GapKind, str] = {
    "content": "message content was not captured; only shapes and token counts are known",
    "system_prompt": "the system prompt is not in the source",
    "tool_definitions": "the tools offered to the model (names, schemas) are not in the source",
    "tool_choice": "whether a call was forced to use a tool is not in the source",
    "sampling": "sampling settings (temperature, max tokens, ...) are not in the source",
    "timing": "call latencies are not in the source",
    "verdicts": "verdicts are inferred from the retry feedback; the validators are not known",
    "tool_results": "a tool call has no recorded result",
    "raw": "the raw request and response bodies are not in the source",
}
DETAIL_ENDING = (
    "the source ends with a tool call and no answer after it: the turn was cut short, so"
    " the run is recorded failed with termination step_cap (what the engine records for a"
    " turn that stops with tool calls pending)"
)


def _where(test: Callable[[ImportedCall, Step], bool]) -> Callable[..., list[int]]:
    def rule(calls: Sequence[ImportedCall], steps: Sequence[Step]) -> list[int]:
        return [s.index for c, s in zip(calls, steps, strict=True) if test(c, s)]

    return rule


RULES: dict[GapKind, Callable[[Sequence[ImportedCall], Sequence[Step]], list[int]]] = {
    "content": _where(lambda c, s: not c.content_known),
    "system_prompt": _where(lambda c, s: c.content_known and c.system is None),
    "tool_definitions": _where(lambda c, s: c.tools is None),
    "tool_choice": _where(lambda c, s: not c.tool_choice_known),
    "sampling": _where(lambda c, s: c.sampling is None),
    "timing": _where(lambda c, s: c.latency_ms is None),
    "verdicts": _where(lambda c, s: any(v.validator == INFERRED_VALIDATOR for v in s.verdicts)),
    "tool_results": _where(
        lambda c, s: s.response is not None and len(s.tool_results) < len(s.response.tool_calls)
    ),
    "raw": _where(lambda c, s: True),
}


def fidelity_of(
    fmt: ImportFormat, source: str, calls: Sequence[ImportedCall], steps: Sequence[Step]
) -> Fidelity:
    gaps = []
    for kind, rule in RULES.items():
        touched = rule(calls, steps)
        if touched:
            every = len(touched) == len(steps)
            gaps.append(FidelityGap(kind=kind, steps=[] if every else touched, detail=DETAIL[kind]))
    last = steps[-1] if steps else None
    if last is not None and last.response is not None and last.response.tool_calls:
        gaps.append(FidelityGap(kind="ending", steps=[last.index], detail=DETAIL_ENDING))
    replayable = not any(g.kind in BLOCKS_REPLAY for g in gaps)
    return Fidelity(format=fmt, source=source, replayable=replayable, gaps=gaps)
