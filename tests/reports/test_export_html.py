"""The HTML report, parsed back with ``html.parser``: every step present and grouped by attempt,
cleared and forced steps marked, verdict reasons and feedback shown, the three views, a version,
nothing external, no script, no key — and text from the run is escaped, never markup."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from inspector.core.records import RawExchange, RunRecord
from inspector.reports import EXPORT_VERSION
from inspector.reports.html_report import render_html
from tests.helpers.runs import demo_record

OPENAI_KEY = "sk-" + "Q9w8E7r6" * 6
ANTHROPIC_KEY = "sk-ant-api03-" + "Kk1_Ll2-" * 8


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)
    children: list[Element] = field(default_factory=list)

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)

    def find(self, tag: str | None = None, **attrs: str) -> list[Element]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and all(
                attrs_match(child.attrs.get(k.rstrip("_")), v) for k, v in attrs.items()
            ):
                found.append(child)
            found.extend(child.find(tag, **attrs))
        return found


def attrs_match(actual: str | None, wanted: str) -> bool:
    return actual is not None and (actual == wanted or wanted in actual.split())


VOID = {"meta", "br", "hr", "img", "link", "input"}


class Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.stack = [self.root]
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.tags.append((tag, element.attrs))
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].text.append(data)


def parse(page: str) -> Tree:
    tree = Tree()
    tree.feed(page)
    tree.close()
    assert [e.tag for e in tree.stack] == ["#root"], "unclosed elements"
    return tree


async def test_every_step_is_in_the_timeline_grouped_by_attempt() -> None:
    record = await demo_record("retry-feedback")
    tree = parse(render_html(record))
    steps = tree.root.find("details", class_="step")
    assert [s.attrs["data-step"] for s in steps] == [str(s.index) for s in record.steps]
    attempts = tree.root.find("section", class_="attempt")
    assert [a.attrs["id"] for a in attempts] == ["attempt-1", "attempt-2", "attempt-3"]
    in_attempt_1 = attempts[0].find("details", class_="step")
    assert [s.attrs["data-step"] for s in in_attempt_1] == ["1", "2"]
    for element, step in zip(steps, record.steps, strict=True):
        assert element.attrs["data-status"] == step.status
        assert f"st-{step.status}" in element.attrs["class"].split()
        summary = element.find("summary")[0].all_text()
        assert step.status in summary


async def test_cleared_attempts_verdict_reasons_and_feedback_are_shown() -> None:
    record = await demo_record("retry-feedback")
    tree = parse(render_html(record))
    steps = {s.attrs["data-step"]: s for s in tree.root.find("details", class_="step")}
    for step in record.steps:
        element = steps[str(step.index)]
        assert ("cleared" in element.attrs["class"].split()) == step.cleared
        assert (element.attrs.get("data-cleared") == "true") == step.cleared
        if step.cleared:
            assert element.find("span", class_="mark-cleared")
        reasons = [r.all_text() for r in element.find("td", class_="reason")]
        assert reasons == [v.reason for v in step.verdicts]
        feedback = " ".join(f.all_text() for f in element.find("div", class_="feedback"))
        for message in step.feedback:
            assert message.content and message.content in feedback
        if step.response and step.response.text:
            assert step.response.text in element.find("div", class_="response")[0].all_text()
    assert sum(1 for s in record.steps if s.cleared) == 2


def _shown_roles(step: Element) -> list[str]:
    request = step.find("details", class_="request")[0]
    return [m.attrs["class"].split()[1] for m in request.find("div", class_="msg")]


async def test_what_the_model_saw_lists_the_system_prompt_and_messages_by_role() -> None:
    record = await demo_record("retry-feedback")
    steps = parse(render_html(record)).root.find("details", class_="step")
    first = steps[0].find("details", class_="request")[0]
    assert record.steps[0].request.system in first.all_text()
    assert _shown_roles(steps[0]) == [f"role-{m.role}" for m in record.steps[0].request.messages]
    # Later requests repeat the history: only what is new is shown, after a pointer to the
    # step whose request it continues (the page stays linear in the turn's length).
    for element, step, before in zip(steps[1:], record.steps[1:], record.steps[:-1], strict=True):
        repeated = len(before.request.messages)
        assert step.request.messages[:repeated] == before.request.messages
        new = step.request.messages[repeated:]
        assert _shown_roles(element) == [f"role-{m.role}" for m in new]
        pointer = element.find("p", class_="repeated")[0]
        assert f"messages 1–{repeated}" in pointer.all_text()
        assert pointer.find("a")[0].attrs["href"] == f"#step-{before.index}"


async def test_a_rewritten_history_is_shown_whole() -> None:
    record = await demo_record("retry-feedback", "policy.feedback_history=latest")
    steps = parse(render_html(record)).root.find("details", class_="step")
    last, before = record.steps[-1].request.messages, record.steps[-2].request.messages
    assert last[: len(before)] != before  # "latest" dropped the first failed attempt
    assert _shown_roles(steps[-1]) == [f"role-{m.role}" for m in last]
    assert not steps[-1].find("p", class_="repeated")


async def test_forced_steps_and_the_final_output_or_error() -> None:
    capped = await demo_record("step-cap")
    tree = parse(render_html(capped))
    forced = [s for s in tree.root.find("details", class_="step") if s.find(class_="mark-forced")]
    assert [s.attrs["data-step"] for s in forced] == ["4"]
    assert "tools off" in forced[0].find(class_="mark-forced")[0].all_text()
    assert capped.output in tree.root.find("section", id="outcome")[0].all_text()

    failed = await demo_record("step-cap", "policy.final_step=none")
    outcome = parse(render_html(failed)).root.find("section", id="outcome")[0].all_text()
    assert failed.error is not None and failed.error.message in outcome
    assert "no output" in outcome


async def test_the_three_views() -> None:
    record = await demo_record("retry-feedback")
    tree = parse(render_html(record))
    saw = tree.root.find("section", id="view-model")[0]
    final_request = record.steps[-1].request
    assert saw.find("pre")[0].all_text().strip() == final_request.system
    assert len(saw.find("div", class_="msg")) == len(final_request.messages)
    transcript = tree.root.find("section", id="view-transcript")[0]
    assert len(transcript.find("div", class_="msg")) == len(record.transcript)
    stream = tree.root.find("section", id="view-stream")[0]
    shown = stream.find("div", class_="streamed")
    texts = [s.find("pre")[0].all_text() for s in shown]
    answers = [s for s in record.steps if s.response and s.response.text]
    assert texts == [s.response.text for s in answers if s.response]
    assert ["cleared" in s.attrs["class"].split() for s in shown] == [s.cleared for s in answers]
    assert record.output == texts[-1] and not answers[-1].cleared


async def test_structured_output_in_tool_mode_shows_the_final_answer_arguments() -> None:
    record = await demo_record("invalid-output-fallback")
    tree = parse(render_html(record))
    stream = tree.root.find("section", id="view-stream")[0]
    shown = stream.find("div", class_="streamed")
    assert len(shown) == 3 and all("cleared" in s.attrs["class"] for s in shown)
    assert '"body"' in shown[0].all_text()
    pinned = tree.root.find(class_="mark-forced")
    assert pinned and "final_answer pinned" in pinned[0].all_text()
    assert "Fallback output" in tree.root.find("section", id="outcome")[0].all_text()


async def test_versioned_self_contained_and_scriptless() -> None:
    record = await demo_record("final-answer-tool")
    page = render_html(record)
    tree = parse(page)
    metas = {t[1].get("name"): t[1].get("content") for t in tree.tags if t[0] == "meta"}
    assert metas["agent-inspector-export-version"] == str(EXPORT_VERSION)
    assert metas["agent-inspector-record-version"] == str(record.version)
    assert metas["agent-inspector-run-id"] == record.run_id
    footer = tree.root.find("footer")[0].all_text()
    assert f"export version {EXPORT_VERSION}" in footer
    assert not [t for t in tree.tags if t[0] in ("script", "link", "iframe", "img", "object")]
    for _, attrs in tree.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), name
            assert "http:" not in value and "https:" not in value and "//" not in value
    assert "url(" not in page and "@import" not in page
    assert "<script" not in page.lower()


async def test_run_text_is_escaped_not_markup() -> None:
    record = await demo_record("retry-feedback")
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    steps = [*record.steps[:-1], record.steps[-1].model_copy(update={"error": evil})]
    page = render_html(record.model_copy(update={"steps": steps, "output": evil}))
    tree = parse(page)
    assert not [t for t in tree.tags if t[0] in ("script", "img")]
    assert evil in tree.root.find("section", id="outcome")[0].all_text()


async def test_no_key_in_the_report() -> None:
    record = await demo_record("retry-feedback")
    raw = RawExchange(
        request={"headers": {"x-api-key": ANTHROPIC_KEY}, "messages": [f"use {OPENAI_KEY}"]},
        response={"log": f"Authorization: Bearer {OPENAI_KEY}"},
    )
    first = record.steps[0]
    request = first.request.model_copy(update={"system": f"key {ANTHROPIC_KEY} inside"})
    steps = [first.model_copy(update={"raw": raw, "request": request}), *record.steps[1:]]
    leaky = RunRecord.model_validate(
        record.model_copy(update={"steps": steps}).model_dump(mode="json")
    )
    page = render_html(leaky)
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "Q9w8E7r6", "Kk1_Ll2"):
        assert secret not in page
    raw_block = parse(page).root.find("details", class_="raw")
    assert len(raw_block) == 1 and "[redacted]" in raw_block[0].all_text()
