"""The Sweep view (issue 15, in the window): a grid set up and run N times per arm on the qasync
loop, the per-arm statistics of ``inspector.sweeps.build_report`` (the CLI's numbers) in a table
and charts, live as runs finish.

Inputs: the store's path and a notifier. It asks the window through ``SweepController``'s
signals: ``runsChanged`` (runs were recorded), ``armRunsShown`` (filter the runs list to these
runs), ``compareRequested`` (open these runs in Compare). It imports no other feature."""
