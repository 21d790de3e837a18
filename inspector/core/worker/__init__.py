"""User code (python validators, tools, feedback builders, fallbacks) in a supervised worker
process, never in the app's own: ``pool`` is the app's side (``call``, ``check``,
``function_names``, ``forget``), ``child`` the worker's, ``protocol`` what crosses between
them, ``contexts`` the ``ctx`` objects user code receives and ``ending`` how a call that never
returned is described.

This module imports nothing: ``python -m inspector.core.worker.child`` starts a worker, and its
start-up cost is paid on every replacement.
"""
