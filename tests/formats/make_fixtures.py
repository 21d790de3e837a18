"""Writes the Pydantic AI fixtures of tests/formats/fixtures by running Pydantic AI itself.

A ``FunctionModel`` plays the model (no network): it calls a tool, answers with markdown that an
output validator rejects with ``ModelRetry``, then answers plain text. The run is traced with
Pydantic AI's own OpenTelemetry instrumentation into the SDK's in-memory exporter, encoded with
the SDK's OTLP encoder (the bytes an OTLP exporter would send) and written as OTLP/JSON; the
message history is written with ``ModelMessagesTypeAdapter.dump_json``.

    .venv/bin/python -m tests.formats.make_fixtures tests/formats/fixtures
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from inspector.formats.otlp_json import from_protobuf_dict

SYSTEM = "You write SMS messages."
USER = "Tell Sam the meeting moved to 3pm."
FEEDBACK = "Plain text only: no markdown characters."
FINAL = "Hi Sam, the meeting moved to 3pm."


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answered = sum(isinstance(m, ModelResponse) for m in messages)
    if answered == 0:
        return ModelResponse(
            parts=[ToolCallPart("lookup_contact", {"name": "Sam"}, tool_call_id="call_1")]
        )
    if answered == 1:
        return ModelResponse(parts=[TextPart("**Hi Sam** - meeting moved to 3pm")])
    return ModelResponse(parts=[TextPart(FINAL)])


def write(folder: Path) -> tuple[Path, Path]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = Agent(FunctionModel(_model), system_prompt=SYSTEM, name="sms-agent")
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool_plain
    def lookup_contact(name: str) -> str:
        """Find a contact"""
        return "Sam: +1 555 0100"

    @agent.output_validator
    def no_markdown(output: str) -> str:
        if "*" in output:
            raise ModelRetry(FEEDBACK)
        return output

    # asyncio.run closes its loop (run_sync leaves one behind: a ResourceWarning in pytest).
    result = asyncio.run(agent.run(USER))
    assert result.output == FINAL
    folder.mkdir(parents=True, exist_ok=True)
    history = folder / "pydantic_ai_history.json"
    history.write_bytes(ModelMessagesTypeAdapter.dump_json(result.all_messages(), indent=2))
    trace = folder / "pydantic_ai_trace.otlp.json"
    document = from_protobuf_dict(MessageToDict(encode_spans(exporter.get_finished_spans())))
    trace.write_text(json.dumps(document, indent=1) + "\n")
    provider.shutdown()
    return history, trace


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/formats/fixtures"))
