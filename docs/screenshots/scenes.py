"""Renders the screenshots of the editing loop (issue 6) on Qt's offscreen platform:

- ``validator-editor.png``: a run re-validated after its python validator was relaxed and
  saved: the flipped steps highlighted in the timeline, the editor beside them;
- ``validator-error.png``: the same validator with a bug: the error at its line, ``error``
  verdicts;
- ``compare.png``: three runs of demo:retry-feedback under three feedback policies, compared;
- ``replay.png``: a replay under another policy, linked to its original;
- ``model-saw.png`` / ``model-saw-diff.png``: demo:retry-feedback's last step in the Model saw
  tab, its messages badged (feedback, kept answers, new), then its diff with the previous call.

    .venv/bin/python docs/screenshots/scenes.py [OUT_DIR]

Everything runs on the scripted model in a throwaway store and folder; nothing is called.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


from inspector.app.app import save_screenshot
from inspector.app.detail.step_detail import MODEL_SAW
from inspector.app.driven import drive_window, next_emission
from inspector.app.shell.main_window import MainWindow
from inspector.core.records import RunRecord

SCENARIO = """\
# An SMS turn whose drafts are judged by python validators (checks.py).
name = "sms-checks"
description = "SMS must be plain text under 160 chars"

[model]
provider = "scripted"

[prompt]
system = "You write SMS messages."
user = "Tell Sam the meeting moved to 3pm."

[[validators]]
kind = "python"
function = "checks.py:no_markdown"

[[validators]]
kind = "python"
function = "checks.py:fits_sms"

[policy]
max_attempts = 3

[[script]]
text = "**Hi Sam!** The meeting moved to *3pm* today."
[[script]]
text = \"\"\"Hi Sam! Quick heads-up from the team: the meeting that was planned for this \
morning has moved to 3pm today, same room as before. Let me know if that does not work.\"\"\"
[[script]]
text = "Hi Sam, the meeting moved to 3pm today, same room."
"""
STRICT = '''\
"""Validators of sms-checks: each returns None (pass) or the feedback text (fail)."""

MARKDOWN = "*_#`"


def no_markdown(output, ctx):
    found = [c for c in output if c in MARKDOWN]
    if found:
        return f"Plain text only: no markdown ({found[0]!r} found)."
    return None


def fits_sms(output, ctx):
    if len(output) > 160:
        return f"An SMS holds 160 characters, this has {len(output)}. Shorten it."
    return None
'''
# Bold is fine after all: only headings and code marks fail now.
LAX = STRICT.replace('MARKDOWN = "*_#`"', 'MARKDOWN = "#`"  # bold and italics are fine')
BUGGY = STRICT.replace(
    "    if len(output) > 160:",
    "    limit = ctx.policy.max_length  # no such field\n    if len(output) > limit:",
)


async def settle(window: MainWindow) -> None:
    for _ in range(20):
        await asyncio.sleep(0.02)
    while window.runner.busy:
        await asyncio.sleep(0.02)


async def run(window: MainWindow, ref: str, overrides: list[str] | None = None) -> RunRecord:
    window.library.select_scenario(ref)
    (record,) = await next_emission(
        window.runner.finished, lambda: window.runner.start(ref, overrides or [])
    )
    await settle(window)
    return record  # type: ignore[no-any-return]


async def save_validators(window: MainWindow, text: str) -> None:
    dock = window.validators
    dock.python_editor.editor.setPlainText(text)
    await next_emission(dock.revalidator.finished, dock.python_editor.save)
    await settle(window)


async def scenes(window: MainWindow, out: Path, folder: Path) -> None:
    scenario = folder / "sms.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    (folder / "checks.py").write_text(STRICT, encoding="utf-8")

    await run(window, str(scenario))
    assert window.validators_dock is not None
    window.validators_dock.raise_()
    await save_validators(window, LAX)
    window.timeline.select_last()
    window.validators.python_editor.editor.go_to_line(5)
    save_screenshot(window, out / "validator-editor.png")
    print("wrote validator-editor.png")

    await save_validators(window, BUGGY)
    window.validators.python_editor.editor.go_to_line(15)
    save_screenshot(window, out / "validator-error.png")
    print("wrote validator-error.png")
    await save_validators(window, STRICT)

    demo = "demo:retry-feedback"
    runs = [
        await run(window, demo, [f'policy.feedback_history="{history}"'])
        for history in ("accumulate", "latest", "none")
    ]
    await next_emission(
        window.compare.view.lineDiffShown, lambda: window.compare_runs([r.run_id for r in runs])
    )
    await settle(window)  # the right docks step aside while the Compare tab is in front
    save_screenshot(window, out / "compare.png")
    print("wrote compare.png")

    window.compare.show_timeline()
    window.library.select_run(runs[0].run_id)
    await settle(window)
    window.policy.policy_form.set_values({"feedback_role": "tool"})
    await next_emission(window.runner.finished, window.replay.replay_action.trigger)
    await settle(window)
    window.policy_dock.raise_()
    window.timeline.select_last()
    save_screenshot(window, out / "replay.png")
    print("wrote replay.png")
    await sweep_scene(window, out)
    await model_saw_scene(window, out)
    await attempts_scene(window, out)


async def model_saw_scene(window: MainWindow, out: Path) -> None:
    """The Model saw tab of demo:retry-feedback's last step: badges, then the diff."""
    await run(window, "demo:retry-feedback")
    window.centre_tabs.show_timeline()
    window.detail_dock.raise_()
    window.timeline.select_last()
    window.detail.tabs.setCurrentIndex(MODEL_SAW)
    await settle(window)
    save_screenshot(window, out / "model-saw.png")
    print("wrote model-saw.png")
    window.detail.model_saw_pane.diff_call.click()
    await settle(window)
    save_screenshot(window, out / "model-saw-diff.png")
    print("wrote model-saw-diff.png")
    window.detail.model_saw_pane.diff_call.click()


async def attempts_scene(window: MainWindow, out: Path) -> None:
    """The Attempts tab after demo:retry-feedback at 1400x900, after
    demo:invalid-output-fallback at 1024x700 (its fallback value in the kept column)."""
    size = window.size()
    for demo, (width, height), name in (
        ("retry-feedback", (1400, 900), "attempts.png"),
        ("invalid-output-fallback", (1024, 700), "attempts-1024.png"),
    ):
        await run(window, f"demo:{demo}")
        window.resize(width, height)
        window.centre_tabs.show_attempts()
        await settle(window)
        save_screenshot(window, out / name)
        print(f"wrote {name}")
    window.resize(size)
    window.centre_tabs.show_timeline()


async def sweep_scene(window: MainWindow, out: Path) -> None:
    """The Sweep tab after demo:sweep, 3 arms x 10, at 1400x900 and at 1024x700."""
    window.library.select_scenario("demo:sweep")
    window.centre_tabs.show_sweep()
    view, controller = window.sweep_view, window.sweep
    view.vary.setPlainText("policy.feedback_history=accumulate,latest,none")
    view.repeat.setValue(10)
    view.run_button.click()
    while controller.running:
        await asyncio.sleep(0.05)
    view.table.selectRow(0)
    await settle(window)
    save_screenshot(window, out / "sweep.png")
    print("wrote sweep.png")
    size = window.size()
    window.resize(1024, 700)
    await settle(window)
    save_screenshot(window, out / "sweep-1024.png")
    print("wrote sweep-1024.png")
    window.resize(size)


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent).resolve()
    with tempfile.TemporaryDirectory(prefix="agent-inspector-scenes-") as tmp:
        folder = Path(tmp) / "scenario"
        folder.mkdir()
        drive_window(Path(tmp) / "runs.sqlite3", lambda window: scenes(window, out, folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
