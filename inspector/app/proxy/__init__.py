"""The recording proxy in the window (docs/window-proxy.md): the Proxy menu starts and stops a
``RecordingProxy`` on the window's own asyncio loop, and ``StoreWatch`` notices runs that other
processes (a terminal's ``agent-inspector proxy`` or ``run``) write to the same store.

Inputs: the store path, a notifier; talks back through ``runsChanged`` and ``urlChanged``."""
