"""User tools: canned results or ``file.py:function`` (sync or async).

A tool that raises, an unknown tool name or arguments that miss the schema give the model an
error result — never a crash."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inspector.core.errors import last_line
from inspector.core.loading import load_function
from inspector.core.messages import ToolCall, content_text
from inspector.core.records import ToolResult, ToolSpec
from inspector.core.scenario import ToolConfig
from inspector.core.schema import compile_schema, schema_errors
from inspector.core.threads import in_daemon_thread

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
        self._functions: dict[str, Callable[..., Any]] = {
            t.name: load_function(t.function, base_dir, f"{source}: tools[{i}].function")
            for i, t in enumerate(tools)
            if t.function
        }
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
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for runs the coroutine in a task of its
            # own, from which a SystemExit raised by user code would escape the event loop.
            async with asyncio.timeout(self.timeout_s):
                if inspect.iscoroutinefunction(fn):
                    value = await fn(**call.arguments)
                else:
                    # A daemon thread, not the loop's pool: cancelling a turn (Ctrl+C, Stop) while
                    # a slow tool runs ends it now instead of when the tool returns.
                    value = await in_daemon_thread(fn, **call.arguments)
        except TimeoutError:
            return self._error(call, f"timed out after {self.timeout_s:g} s")
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # even SystemExit from user code is only a tool error
            return self._error(call, last_line(exc))
        return ToolResult(tool_call_id=call.id, name=call.name, content=content_text(value))

    @staticmethod
    def _error(call: ToolCall, message: str) -> ToolResult:
        return ToolResult(
            tool_call_id=call.id, name=call.name, content=f"Error: {message}", error=message
        )
