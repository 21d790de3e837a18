"""Reports over recorded runs: compare tables and exports (JSONL, HTML). Core only."""
