"""retry-feedback's python validator: no markdown
in an SMS, as code you can change.

Edit a copy of the demo (Ctrl+Shift+E), change
MARKDOWN or the check, save (Ctrl+S): the recorded
drafts are judged again and the verdicts that
flip are listed and marked in the timeline, with
no model call. Then Replay (Ctrl+Shift+R).

check(output, ctx) returns None/True (pass),
False or a string (fail; the string is the
feedback), or a Verdict (reason and feedback).
"""

from inspector.core.records import Verdict

MARKDOWN = "*_#`"  # characters an SMS shows as is


def no_markdown(output: str, ctx: object) -> Verdict:
    for at, char in enumerate(output):
        if char in MARKDOWN:
            return Verdict.failed(
                "no_markdown",
                f"found {char!r} at {at}",
                "Plain text only: no markdown characters.",
            )
    return Verdict.passed("no_markdown")
