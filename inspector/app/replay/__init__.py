"""The Replay button and "Compare with original" (docs/window-replay.md):
``ReplayController``. May touch the runner, the ``RunFocus``, the policy panel (read only) and
a notifier; asks the window through ``compareRequested``/``policyRaised``."""
