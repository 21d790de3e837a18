"""Chat messages rendered as bubbles by role, as escaped HTML for a ``QTextBrowser``.

Everything user- or model-supplied goes through ``html.escape``. Long histories stay fast: a
view shows the last ``MESSAGE_LIMIT`` messages and each message's first ``CONTENT_LIMIT``
characters, and says what it left out (the Raw tab keeps everything).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from PySide6.QtWidgets import QTextBrowser, QWidget

from inspector.app.theme import is_dark
from inspector.app.widgets.json_view import json_html
from inspector.core.messages import Message
from inspector.reports.request_marks import Badge

MESSAGE_LIMIT = 200
CONTENT_LIMIT = 20_000

# role: (accent light, accent dark, bubble light, bubble dark)
_ROLE_COLOURS: dict[str, tuple[str, str, str, str]] = {
    "system": ("#b7791f", "#e0b050", "#fbf4e6", "#3a3222"),
    "user": ("#2b6cb0", "#7fb2f0", "#eaf2fb", "#22303f"),
    "assistant": ("#2f855a", "#7fd1a0", "#ebf6ef", "#22352b"),
    "tool": ("#6b46c1", "#b7a1f0", "#f1edfb", "#2f2a40"),
    "feedback": ("#c05621", "#f0a070", "#fcefe6", "#3d2a20"),
}
MUTED = ("#6b6b6b", "#a0a0a0")
# badge kind: (chip light, chip dark); light chips carry white text, dark ones near-black
_BADGE_COLOURS: dict[str, tuple[str, str]] = {
    "new": ("#0b7285", "#66d9e8"),
    "feedback": ("#c05621", "#f0a070"),
    "kept": ("#c53030", "#fc8181"),
    "synthetic": ("#6b46c1", "#b7a1f0"),
    "instruction": ("#975a16", "#f6c36b"),
}


def muted(dark: bool) -> str:
    return MUTED[1 if dark else 0]


def role_accent(role: str, dark: bool) -> str:
    colours = _ROLE_COLOURS.get(role, _ROLE_COLOURS["system"])
    return colours[1 if dark else 0]


def clip(text: str, limit: int = CONTENT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters; the Raw tab has them)"


def pre_text(text: str) -> str:
    """Escaped text that keeps its line breaks and spaces and still wraps."""
    return f'<div style="white-space:pre-wrap">{html.escape(clip(text))}</div>'


def tag(text: str, colour: str) -> str:
    """A small coloured label, e.g. a role or a status."""
    return f'<span style="color:{colour};font-weight:600">{html.escape(text)}</span>'


def chip(text: str, kind: str, dark: bool) -> str:
    """A badge: ``text`` on a filled background in the colour of its ``kind``."""
    light, deep = _BADGE_COLOURS.get(kind, _BADGE_COLOURS["synthetic"])
    background, colour = (deep, "#1a1a1a") if dark else (light, "#ffffff")
    return (
        f'<span style="background-color:{background};color:{colour};font-weight:600">'
        f"&nbsp;{html.escape(text).replace(' ', '&nbsp;')}&nbsp;</span>"  # wraps between chips
    )


def heading(text: str, dark: bool, note: str = "") -> str:
    extra = f' <span style="color:{muted(dark)}">{html.escape(note)}</span>' if note else ""
    return f'<h4 style="margin-top:10px;margin-bottom:4px">{html.escape(text)}{extra}</h4>'


def note(text: str, dark: bool) -> str:
    return f'<p style="color:{muted(dark)};margin:2px 0px">{html.escape(text)}</p>'


def bubble(
    role: str,
    body: str,
    dark: bool,
    label: str = "",
    detail: str = "",
    badges: Sequence[Badge] = (),
) -> str:
    """One message box: an accent strip in the role's colour, the role label and ``badges``,
    then ``body`` (already HTML)."""
    accent_light, accent_dark, bg_light, bg_dark = _ROLE_COLOURS.get(role, _ROLE_COLOURS["system"])
    accent, bg = (accent_dark, bg_dark) if dark else (accent_light, bg_light)
    title = tag(label or role.upper(), accent)
    if detail:
        title += f' <span style="color:{muted(dark)}">· {html.escape(detail)}</span>'
    if badges:
        title += "&nbsp; " + " ".join(chip(b.text, b.kind, dark) for b in badges)
    return (
        '<table width="100%" cellspacing="0" cellpadding="6" style="margin-bottom:6px">'
        f'<tr><td width="3" bgcolor="{accent}"></td>'
        f'<td bgcolor="{bg}">{title}{body}</td></tr></table>'
    )


def message_html(
    message: Message, dark: bool, label: str = "", badges: Sequence[Badge] = ()
) -> str:
    """A message's bubble; one the loop injected as feedback takes the feedback colours."""
    detail_parts = []
    if message.name:
        detail_parts.append(message.name)
    if message.tool_call_id:
        detail_parts.append(f"for call {message.tool_call_id}")
    body = pre_text(message.content) if message.content else ""
    for call in message.tool_calls or ():
        body += (
            f"<div>{tag('→ ' + call.name, role_accent('tool', dark))}"
            f' <span style="color:{muted(dark)}">{html.escape(call.id)}</span></div>'
            + json_html(call.arguments, dark)
        )
    if not body:
        body = note("(no content)", dark)
    role = "feedback" if any(b.kind == "feedback" for b in badges) else message.role
    return bubble(
        role,
        body,
        dark,
        label=label or message.role.upper(),
        detail=" ".join(detail_parts),
        badges=badges,
    )


def messages_html(
    messages: Sequence[Message],
    dark: bool,
    limit: int = MESSAGE_LIMIT,
    label: str = "",
    more_link: str = "",
    badges: Mapping[int, Sequence[Badge]] | None = None,
) -> str:
    """Bubbles for ``messages``, the last ``limit`` of them when there are more; ``more_link``:
    the href of a "show more" link in the note saying what was left out; ``badges``: by
    position in ``messages``."""
    shown = messages[-limit:] if len(messages) > limit else messages
    first = len(messages) - len(shown)
    marks = badges or {}
    parts = []
    if len(shown) < len(messages):
        hidden = len(messages) - len(shown)
        more = f' <a href="{more_link}">Show more</a>' if more_link else ""
        text = html.escape(f"{hidden:,} earlier messages not shown; the Raw tab has them all.")
        parts.append(f'<p style="color:{muted(dark)};margin:2px 0px">{text}{more}</p>')
    parts.extend(
        message_html(m, dark, label=label, badges=marks.get(first + k, ()))
        for k, m in enumerate(shown)
    )
    return "".join(parts)


class ChatView(QTextBrowser):
    """A read-only rich-text pane; ``dark`` tells the HTML builders which colours to use."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self._html = ""

    @property
    def dark(self) -> bool:
        return is_dark(self.palette())

    def set_body(self, body: str) -> None:
        """Replaces the content, keeping the scroll position when the same document is redrawn."""
        if body == self._html:
            return
        self._html = body
        bar = self.verticalScrollBar()
        position = bar.value()
        self.setHtml(body)
        bar.setValue(position)

    def set_messages(self, messages: Sequence[Message], empty: str = "No messages.") -> None:
        self.set_body(messages_html(messages, self.dark) if messages else note(empty, self.dark))
