"""What runs under the window and every feature may use: the engine bridge (``TurnRunner``,
the qasync loop), ``RunFocus`` (which run is shown / running / loading), the ``Notifier``
features report through, and ``LatestRead`` (a read off the UI thread of which only the last
lands). Imports no feature and no shell module."""
