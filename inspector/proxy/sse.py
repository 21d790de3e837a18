"""An incremental Server-Sent Events decoder over the bytes the proxy forwards.

The proxy passes each upstream chunk to the client first and only then decodes it here, so the
client's stream is never held back by parsing. Lines may be split anywhere across chunks.
"""

from __future__ import annotations

import codecs


class SSEDecoder:
    """``feed(chunk)`` returns the ``(event, data)`` pairs completed by ``chunk``."""

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")("replace")
        self._line = ""
        self._event = ""
        self._data: list[str] = []
        self._after_cr = False

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        text = self._text.decode(chunk)
        if self._after_cr and text.startswith("\n"):
            text = text[1:]  # the \n of a \r\n split across chunks
        self._after_cr = text.endswith("\r")
        lines = (self._line + text).splitlines(keepends=True)
        self._line = ""
        out: list[tuple[str, str]] = []
        for line in lines:
            if not line.endswith(("\n", "\r")):
                self._line = line  # incomplete: wait for the rest
                break
            self._line_done(line.rstrip("\r\n"), out)
        return out

    def _line_done(self, line: str, out: list[tuple[str, str]]) -> None:
        if not line:
            if self._data:
                out.append((self._event or "message", "\n".join(self._data)))
            self._event, self._data = "", []
            return
        if line.startswith(":"):
            return  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
