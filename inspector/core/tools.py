"""User tools: canned results or ``file.py:function`` (sync or async).

A tool function runs in a user-code worker process (``inspector.core.worker``). A tool that
raises, hangs, exits or crashes its worker, an unknown tool name or arguments that miss the
schema give the model an error result — never a crash. What the tool printed is kept on its
result (``captured``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from inspector.core.messages import ToolCall, content_text
from inspector.core.records import ToolResult, ToolSpec
from inspector.core.scenario import ToolConfig
from inspector.core.schema import compile_schema, schema_errors
from inspector.core.worker import pool
from inspector.core.worker.protocol import Target

# A replay's hook: the recorded result for a call of a side-effect tool (None: not recorded).
RecordedResults = Callable[[ToolCall, ToolConfig], ToolResult | None]


class ToolBox:
    """The scenario's tools, loaded once per run."""

    def __init__(
        self,
        tools: Sequence[ToolConfig],
        base_dir: Path,
        recorded: RecordedResults | None = None,
        *,
        source: str = "<scenario>",
        timeout_s: float = 60.0,
    ) -> None:
        self.configs = {t.name: t for t in tools}
        self.specs = [
            ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in tools
        ]
        self._functions: dict[str, Target] = {
            t.name: Target(t.function, str(base_dir), f"{source}: tools[{i}].function")
            for i, t in enumerate(tools)
            if t.function
        }
        pool.check(list(self._functions.values()))  # imported in a worker, never here
        if self._functions:
            pool.wake()  # awake by the first tool call
        self.timeout_s = timeout_s
        self._recorded = recorded
        self._argument_schemas = {t.name: compile_schema(t.parameters) for t in tools}

    async def execute(self, call: ToolCall) -> ToolResult:
        config = self.configs.get(call.name)
        if config is None:
            known = ", ".join(sorted(self.configs)) or "none"
            return self._error(call, f"unknown tool {call.name!r} (available: {known})")
        if isinstance(call.arguments, str):
            return self._error(call, f"arguments are not a JSON object: {call.arguments[:200]!r}")
        problems = schema_errors(self._argument_schemas[call.name], call.arguments)
        if problems:
            return self._error(call, f"invalid arguments: {problems[0]}")
        if config.side_effects and self._recorded is not None:
            recorded = self._recorded(call, config)
            if recorded is not None:
                return recorded.model_copy(update={"tool_call_id": call.id, "replayed": True})
        fn = self._functions.get(call.name)
        if fn is None:
            return ToolResult(
                tool_call_id=call.id, name=call.name, content=content_text(config.result)
            )
        reply = await pool.call(fn, (), dict(call.arguments), self.timeout_s)
        captured = reply.captured or None
        if reply.error is not None:
            return self._error(call, reply.error, captured)
        try:
            content = content_text(reply.value)
        except Exception as exc:  # e.g. a value json cannot write
            return self._error(call, f"returned a result that cannot be sent as text: {exc}")
        return ToolResult(tool_call_id=call.id, name=call.name, content=content, captured=captured)

    @staticmethod
    def _error(call: ToolCall, message: str, captured: str | None = None) -> ToolResult:
        return ToolResult(
            tool_call_id=call.id,
            name=call.name,
            content=f"Error: {message}",
            error=message,
            captured=captured,
        )
