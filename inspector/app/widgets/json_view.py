"""Pretty JSON with syntax highlighting, palette-aware: Pygments' JSON lexer does the tokenising,
we only map its token types to colours for light and dark palettes.

``json_text`` pretty-prints a value; ``json_html`` renders it as highlighted HTML for the
rich-text views (tool arguments, tools offered); ``JsonView`` is a read-only editor for long
documents (the Raw tab), highlighted block by block by a ``QSyntaxHighlighter``.
"""

from __future__ import annotations

import html
import json
from typing import Any

from pygments.lexers import JsonLexer
from pygments.token import Keyword, Name, Number, Punctuation, String, _TokenType, is_token_subtype
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from inspector.app.theme import is_dark

__all__ = ["JsonView", "is_dark", "json_html", "json_text", "monospace_font"]

# Above this size a document is shown unhighlighted: lexing every line would stall the UI.
HIGHLIGHT_LIMIT = 300_000
# pre-wrap: keeps the indentation, yet a long string wraps instead of widening the view.
PRE = '<pre style="margin-top:2px;margin-bottom:2px;white-space:pre-wrap">'

# (light, dark) colours per token family.
_COLOURS: dict[str, tuple[str, str]] = {
    "key": ("#1f5fa8", "#8cc4ff"),
    "string": ("#17813a", "#9fdc8c"),
    "number": ("#a8521b", "#f2b06b"),
    "constant": ("#8a2fa0", "#d69cf0"),
    "punctuation": ("#6b6b6b", "#9a9a9a"),
}


def monospace_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def json_text(value: Any) -> str:
    """Pretty JSON for a value; a string that holds JSON is parsed first (tool arguments arrive
    as strings while streaming), any other string is shown as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    text: str = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return text


def _family(token: _TokenType) -> str | None:
    if is_token_subtype(token, Name.Tag):
        return "key"
    if is_token_subtype(token, String):
        return "string"
    if is_token_subtype(token, Number):
        return "number"
    if is_token_subtype(token, Keyword):
        return "constant"
    if is_token_subtype(token, Punctuation):
        return "punctuation"
    return None


def json_html(value: Any, dark: bool) -> str:
    """Highlighted, escaped JSON as a ``<pre>`` block for QTextBrowser HTML."""
    text = json_text(value)
    if len(text) > HIGHLIGHT_LIMIT:
        return f"{PRE}{html.escape(text)}</pre>"
    parts: list[str] = []
    for token, chunk in JsonLexer().get_tokens(text):
        family = _family(token)
        escaped = html.escape(chunk)
        if family is None:
            parts.append(escaped)
        else:
            colour = _COLOURS[family][1 if dark else 0]
            parts.append(f'<span style="color:{colour}">{escaped}</span>')
    return PRE + "".join(parts).rstrip("\n") + "</pre>"


class JsonHighlighter(QSyntaxHighlighter):
    """Colours one line at a time: pretty-printed JSON never spans a token across lines."""

    def __init__(self, document: QTextDocument, dark: bool) -> None:
        super().__init__(document)
        self._lexer = JsonLexer()
        self._formats: dict[str, QTextCharFormat] = {}
        for family, colours in _COLOURS.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colours[1 if dark else 0]))
            self._formats[family] = fmt

    def highlightBlock(self, text: str) -> None:
        position = 0
        for token, chunk in self._lexer.get_tokens(text):
            family = _family(token)
            if family is not None:
                self.setFormat(position, len(chunk), self._formats[family])
            position += len(chunk)


class JsonView(QPlainTextEdit):
    """A read-only, highlighted JSON document."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(monospace_font())
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._highlighter: JsonHighlighter | None = None

    def set_value(self, value: Any) -> None:
        self.set_json_text(json_text(value))

    def set_json_text(self, text: str) -> None:
        if self._highlighter is not None:
            self._highlighter.setDocument(None)
            self._highlighter = None
        self.setPlainText(text)
        if len(text) <= HIGHLIGHT_LIMIT:
            self._highlighter = JsonHighlighter(self.document(), is_dark(self.palette()))
