"""retry-feedback's python validator: the SMS
length limit, as code you can change.

Edit a copy of the demo (Ctrl+Shift+E), change
LIMIT or the check, save (Ctrl+S): the recorded
drafts are judged again and the verdicts that
flip are listed and marked in the timeline, with
no model call. Then Replay (Ctrl+Shift+R).

check(output, ctx) returns None/True (pass),
False or a string (fail; the string is the
feedback), or a Verdict (reason and feedback).
"""

from inspector.core.records import Verdict

LIMIT = 160  # characters in one SMS


def max_length(output: str, ctx: object) -> Verdict:
    n = len(output)
    if n <= LIMIT:
        return Verdict.passed(
            "max_length", f"{n} ≤ {LIMIT} characters"
        )
    return Verdict.failed(
        "max_length",
        f"{n} characters > {LIMIT}",
        f"An SMS holds {LIMIT} characters at most. "
        "Shorten it.",
    )
