"""Entry point of the frozen app (PyInstaller runs this file as ``__main__``).

It is the ``agent-inspector`` console script, nothing more: ``agent-inspector`` with no command
opens the window, and every subcommand (``run``, ``replay``, ``gui --self-test`` …) works as in
a checkout. Started with ``--user-code-worker`` it is a user-code worker process instead (the
frozen app has no ``python -m``; see ``inspector.core.worker.pool``).
"""

import sys

if sys.argv[1:2] == ["--user-code-worker"]:
    from inspector.core.worker.child import main as worker_main

    worker_main(sys.argv[2:])
else:
    from inspector.cli import main

    raise SystemExit(main())
