"""Reports over recorded runs: compare tables and exports (JSONL, HTML). Core only."""

# The version of every export format here (JSONL lines, the HTML report's meta tag and footer);
# raised when a reader of an older export would misread a newer one.
EXPORT_VERSION = 1
