"""Playing a recorded run back (docs/window-playback.md): ``Playback`` (the player) and
``PlaybackController`` (actions, keys, the bar). May touch the runner, the ``RunFocus``, the
store's path and a notifier."""
