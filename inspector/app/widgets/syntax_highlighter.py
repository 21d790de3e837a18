"""Syntax highlighting by a Pygments lexer, one block (line) at a time.

Qt re-highlights only the edited block, and the next ones while their start state changes. For a
``RegexLexer`` (Python's and most others) the state carried from line to line is the lexer's state
stack, so a triple-quoted string opened on line 3 is still a string on line 4: each distinct stack
is numbered and stored as the block state. Other lexers are run on each line alone.

Colours come from a Pygments style (a light or a dark one, chosen from the palette); the editor's
background stays the palette's, so only foreground, bold, italic and underline are taken.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.lexers import PythonLexer
from pygments.style import StyleMeta
from pygments.styles import get_style_by_name
from pygments.token import Error, Whitespace, _TokenType
from PySide6.QtGui import (
    QColor,
    QFont,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
ROOT: tuple[str, ...] = ("root",)
Span = tuple[int, _TokenType, str]


def lex_line(
    lexer: RegexLexer, text: str, stack: tuple[str, ...]
) -> tuple[list[Span], tuple[str, ...]]:
    """Tokens of one line (``text`` ends with its newline) lexed from ``stack``, and the stack at
    its end. Pygments' own ``RegexLexer.get_tokens_unprocessed`` loop, which hides the final
    stack; kept in step with pygments 2.21."""
    tokendefs: dict[str, list[Any]] = lexer._tokens  # type: ignore[attr-defined]  # built by its metaclass
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    spans: list[Span] = []
    pos = 0
    while True:
        for rexmatch, action, new_state in statetokens:
            m = rexmatch(text, pos)
            if not m:
                continue
            if action is not None:
                if type(action) is _TokenType:
                    spans.append((pos, action, m.group()))
                else:
                    spans.extend(action(lexer, m))
            pos = m.end()
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for state in new_state:
                        if state == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif state == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(state)
                elif isinstance(new_state, int):
                    # Pops, keeping at least the root state.
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                statetokens = tokendefs[statestack[-1]]
            break
        else:
            if pos >= len(text):
                break
            if text[pos] == "\n":
                # No rule for the newline: the state resets to the root, as in Pygments.
                statestack = ["root"]
                statetokens = tokendefs["root"]
                spans.append((pos, Whitespace, "\n"))
            else:
                spans.append((pos, Error, text[pos]))
            pos += 1
    return spans, tuple(statestack)


class PygmentsHighlighter(QSyntaxHighlighter):
    def __init__(
        self,
        document: QTextDocument,
        lexer: Lexer | None = None,
        *,
        dark: bool = False,
    ) -> None:
        super().__init__(document)
        self._lexer: Lexer = lexer if lexer is not None else PythonLexer()
        self._stateful = isinstance(self._lexer, RegexLexer)
        # Block state n (>= 0) stands for self._stacks[n]; -1 (Qt's "none yet") is the root.
        self._stacks: list[tuple[str, ...]] = [ROOT]
        self._stack_ids: dict[tuple[str, ...], int] = {ROOT: 0}
        self._formats: dict[_TokenType, QTextCharFormat | None] = {}
        self._style_name = DARK_STYLE if dark else LIGHT_STYLE
        self._style: StyleMeta = get_style_by_name(self._style_name)

    def set_dark(self, dark: bool) -> None:
        """Switch to the light or dark style (the palette changed) and re-colour everything."""
        name = DARK_STYLE if dark else LIGHT_STYLE
        if name != self._style_name:
            self._style_name = name
            self._style = get_style_by_name(name)
            self._formats.clear()
            self.rehighlight()

    def style_name(self) -> str:
        return self._style_name

    def format_for(self, token: _TokenType) -> QTextCharFormat | None:
        """The format of a token type, None when the style leaves it plain (cached)."""
        if token not in self._formats:
            self._formats[token] = self._make_format(token)
        return self._formats[token]

    def _make_format(self, token: _TokenType) -> QTextCharFormat | None:
        spec = self._style.style_for_token(token)
        if not (spec["color"] or spec["bold"] or spec["italic"] or spec["underline"]):
            return None
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor(f"#{spec['color']}"))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        if spec["underline"]:
            fmt.setFontUnderline(True)
        return fmt

    def _tokens(self, text: str) -> Iterator[Span]:
        if not self._stateful:
            yield from self._lexer.get_tokens_unprocessed(text + "\n")
            return
        previous = self.previousBlockState()
        stack = self._stacks[previous] if previous >= 0 else ROOT
        assert isinstance(self._lexer, RegexLexer)
        spans, end = lex_line(self._lexer, text + "\n", stack)
        state = self._stack_ids.get(end)
        if state is None:
            state = self._stack_ids[end] = len(self._stacks)
            self._stacks.append(end)
        self.setCurrentBlockState(state)
        yield from spans

    def highlightBlock(self, text: str) -> None:
        # Positions are Python code points; Qt counts UTF-16 units: convert when they differ.
        wide = any(ord(c) > 0xFFFF for c in text)
        for position, token, chunk in self._tokens(text):
            if position >= len(text):
                break
            fmt = self.format_for(token)
            if fmt is None:
                continue
            start, length = position, min(len(chunk), len(text) - position)
            if wide:
                start = len(text[:position].encode("utf-16-le")) // 2
                length = len(text[position : position + length].encode("utf-16-le")) // 2
            self.setFormat(start, length, fmt)
