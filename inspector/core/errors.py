"""The project's own error types. Errors are translated into these at each boundary."""

from __future__ import annotations


def message_line(exc: BaseException) -> str:
    """The last line of an exception's message ("" when it has none)."""
    return (str(exc).strip().splitlines() or [""])[-1]


def one_line(text: str) -> str:
    """``text`` on one line: a message may quote user input (a ``--set`` value, a pattern) that
    holds line breaks, and a one-line error must stay one line. Undecodable command-line
    bytes (lone surrogates) are shown escaped rather than breaking the terminal's encoder."""
    text = text.strip().replace("\r", "\\r").replace("\n", "\\n")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def last_line(exc: BaseException) -> str:
    """``ExcType: the last line of its message`` — how user-code failures are reported."""
    text = message_line(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class InspectorError(Exception):
    """Base of every error the project raises on purpose."""


class BadInputError(InspectorError):
    """Bad input from the user: the message is one line naming what is wrong (CLI exit code 2,
    never a traceback)."""


class ScenarioError(BadInputError):
    """Bad input: a scenario, an override or a referenced file. The message is one line that
    names the file, the field and the problem (CLI exit code 2)."""


class ProviderError(InspectorError):
    """A model call failed. ``retryable`` says whether a transport retry may help."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        kind: str = "ProviderError",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.kind = kind
        self.transport_retries = 0
        self.partial_text = ""  # text received before a stream broke off


class ReplayDivergence(ProviderError):
    """A replay asked for something the recording does not have (a model request that differs
    from every recorded one under ``--offline``, or a side-effect tool call never recorded)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="ReplayDivergence")
