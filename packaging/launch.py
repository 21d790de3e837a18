"""Entry point of the frozen app (PyInstaller runs this file as ``__main__``).

It is the ``agent-inspector`` console script, nothing more: ``agent-inspector`` with no command
opens the window, and every subcommand (``run``, ``replay``, ``gui --self-test`` …) works as in
a checkout.
"""

from inspector.cli import main

raise SystemExit(main())
