#!/bin/sh
# Regenerates the window screenshots of the five offline demos, final step selected, at 1400×900
# (NAME.png) and at 1024×700 (NAME-1024.png, the smallest size the window is laid out for):
#   docs/screenshots/make.sh
# Runs each demo in the window on Qt's offscreen platform, recorded into a throwaway store.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
for demo in retry-feedback step-cap final-answer-tool empty-final invalid-output-fallback; do
  QT_QPA_PLATFORM=offscreen "$python" -m inspector gui "demo:$demo" \
    --db "$db/runs.sqlite3" --screenshot "$here/$demo.png"
  echo "wrote docs/screenshots/$demo.png"
  QT_QPA_PLATFORM=offscreen "$python" -m inspector gui "demo:$demo" --size 1024x700 \
    --db "$db/runs.sqlite3" --screenshot "$here/$demo-1024.png"
  echo "wrote docs/screenshots/$demo-1024.png"
done
# The editing loop: validator editor with flips, a validator error, a three-way compare, a replay,
# the Sweep tab, the Attempts tab (retry-feedback at 1400×900, invalid-output-fallback at 1024×700).
QT_QPA_PLATFORM=offscreen "$python" "$here/scenes.py" "$here"
# A retry recorded by the recording proxy hosted in the window.
QT_QPA_PLATFORM=offscreen "$python" "$here/proxy_scene.py" "$here"
