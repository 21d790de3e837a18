"""The Replay button (``ReplayController``): re-run the shown run under the policy panel's edits,
from the recording until the first divergence, then live (or stop there when "Offline" is
ticked), and compare the result with its original. It touches the runner, the ``RunFocus``, the
policy panel (read only) and a notifier; the window places its actions and connects
``compareRequested``/``policyRaised``.

Replay in the window: re-run the shown run under the policy panel's edits, from the
recording until the first divergence, then live (or stop there when "Offline" is ticked), and
compare the result with its original.

Which policy a replay uses: the one the panel shows. When the panel holds the run's scenario,
every policy and model field whose panel value differs from what the run was recorded with
becomes a ``--set`` override of the replay (so resetting the panel to the file's values replays
a run recorded with other overrides under the file's policy). The panel is not reloaded when a
run is selected: it keeps the user's edits and keeps describing what Run (Ctrl+R) starts. A panel
holding another scenario replays the run as recorded when it has no edits; its edits are refused
rather than applied to a turn they were not written for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QCheckBox, QStyle, QWidget

from inspector.app.runtime.notifier import Level, Notifier
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.runtime.runner import TurnRunner
from inspector.core.events import RunStarted
from inspector.core.records import RunRecord
from inspector.core.scenario import ModelConfig
from inspector.editing.form_fields import overrides
from inspector.providers.replay import ReplayProvider
from inspector.reports.run_text import record_problem

if TYPE_CHECKING:
    from inspector.app.policy.policy_panel import PolicyPanel

REPLAY_KEYS = "Ctrl+Shift+R"


def panel_overrides(panel: PolicyPanel, recorded: RunRecord | RunStarted) -> list[str]:
    """The panel's policy and model values as ``--set`` overrides of what the run was recorded
    with: the replay runs exactly what the panel shows."""
    model = ModelConfig.model_validate(recorded.scenario_source.get("model", {}))
    return [
        *overrides("policy", recorded.policy.model_dump(), panel.policy_form.values()),
        *overrides("model", model.model_dump(), panel.model_form.values()),
    ]


COMPARE_KEYS = "Ctrl+Shift+D"


class ReplayController(QObject):
    """The Replay and "Compare with original" actions and the "Offline" box."""

    compareRequested = Signal(list)  # [original run_id, replay run_id]
    policyRaised = Signal()  # the policy panel has invalid values: bring it to the front

    def __init__(
        self,
        runner: TurnRunner,
        focus: RunFocus,
        policy: PolicyPanel,
        notify: Notifier,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._runner, self._focus, self._policy, self._notify = runner, focus, policy, notify
        # (original, replay) of the last replay this window finished: what Compare shows when
        # the shown run is not itself a replay.
        self.last_pair: tuple[str, str] | None = None

        style = parent.style()
        self.replay_action = QAction("Re&play", parent)
        self.replay_action.setObjectName("replayAction")
        self.replay_action.setShortcut(QKeySequence(REPLAY_KEYS))
        self.replay_action.setToolTip(
            "Replay the shown run under the policy panel's edits: recorded answers until the "
            f"first divergence ({REPLAY_KEYS})"
        )
        self.replay_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_BrowserReload))
        self.replay_action.triggered.connect(self.replay)
        self.compare_action = QAction("Compare with &original", parent)
        self.compare_action.setObjectName("compareWithOriginalAction")
        self.compare_action.setShortcut(QKeySequence(COMPARE_KEYS))
        self.compare_action.setToolTip(f"Compare a replay with the run it replays ({COMPARE_KEYS})")
        self.compare_action.triggered.connect(self.compare_with_original)
        self.offline_box = QCheckBox("Offline", parent)
        self.offline_box.setObjectName("replayOffline")
        self.offline_box.setToolTip(
            "Replay without calling the model: stop at the first request the recording cannot "
            "answer"
        )
        runner.busyChanged.connect(self._busy)
        self._busy(runner.busy)

    def actions(self) -> dict[str, QAction]:
        return {"replay": self.replay_action, "compare_original": self.compare_action}

    @property
    def offline(self) -> bool:
        return self.offline_box.isChecked()

    def replay(self) -> bool:
        """Starts the replay of the shown run; False (and a message saying why) when it cannot."""
        notify, focus = self._notify, self._focus
        shown = focus.shown
        if self._runner.busy:
            notify.show_message("info", "Wait for the running turn to finish first.")
            return False
        loading = focus.loading or (shown.run_id if shown is not None and shown.light else None)
        if loading is not None:  # picked in the list, not (wholly) shown yet
            notify.show_message(
                "info", f"Run {loading} is still loading: replay it once it is shown."
            )
            return False
        if shown is None or not shown.run_id:
            notify.show_message("info", "Pick a recorded run to replay first.")
            return False
        policy = self._policy
        header = shown.record or shown.header
        scenario = header.scenario if header is not None else ""
        if policy.scenario is not None and policy.scenario.name == scenario and header is not None:
            overrides = panel_overrides(policy, header)
        else:
            overrides = policy.overrides() if policy.scenario is not None else []
        if overrides and policy.scenario is not None and policy.scenario.name != scenario:
            notify.show_message(
                "error",
                f"The policy panel holds edits for scenario {policy.scenario.name}, and run "
                f"{shown.run_id} is of {scenario}: select {scenario} (or Reset the panel) to "
                "replay it.",
            )
            return False
        errors = policy.errors() if policy.scenario is not None else {}
        if errors:
            self.policyRaised.emit()
            lines = "; ".join(f"{field}: {message}" for field, message in errors.items())
            notify.show_message("error", f"The policy has invalid values: {lines}")
            return False
        return self._runner.start_replay(shown.run_id, overrides, self.offline)

    def compare_with_original(self) -> bool:
        """Opens the comparison of the shown replay (else the last one made here) with its
        original; False (and a message) when there is nothing to compare."""
        shown = self._focus.shown
        pair = self.last_pair
        if shown is not None and shown.record is not None and shown.record.replay_of:
            pair = (shown.record.replay_of, shown.run_id)
        if pair is None:
            self._notify.show_message(
                "info", "Show a replayed run first: it is compared with the run it replays."
            )
            return False
        self.compareRequested.emit(list(pair))
        return True

    def _busy(self, busy: bool) -> None:
        self.replay_action.setEnabled(not busy)

    def finished(self, record: RunRecord) -> None:
        """After a replay: say what came from where (and how it ended), offer the comparison.
        The window calls it after its own message about the run, so this one is left showing."""
        turn = self._runner.turn
        if record.replay_of is None or turn is None or turn.run_id != record.run_id:
            return
        provider = turn.provider
        if not isinstance(provider, ReplayProvider):
            return
        self.last_pair = (record.replay_of, record.run_id)
        problem = record_problem(record)
        ended = problem or f"run {record.run_id} {record.status}"
        text = f"{provider.summary()} — {ended} — Compare with original: {COMPARE_KEYS}"
        level: Level = "info"
        if problem is not None:  # as the window tells it: a stopped or exhausted turn warns
            level = "warning" if record.status in ("failed", "cancelled") else "error"
        self._notify.show_message(level, text)
