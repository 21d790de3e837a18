#!/usr/bin/env bash
# Builds the standalone app into dist/agent-inspector/ with packaging/agent-inspector.spec.
#   packaging/build.sh            build (installs PyInstaller and, as root on Debian, the X11
#                                 libraries Qt's xcb plugin links so they are bundled)
#   packaging/build.sh --test     build, then run the frozen app's self-test headless
# PYTHON selects the interpreter (default .venv/bin/python, the one `make setup` makes).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
DIST=dist/agent-inspector

# PyInstaller copies the host's libraries into the bundle: without these, the bundle has no xcb
# platform plugin dependencies and cannot open a window on a desktop (NOTES-QT: Qt blames
# libxcb-cursor0 when icccm4/keysyms1 are the ones missing).
BUILD_DEBS="libgl1 libegl1 libxcb1 libfontconfig1 libglib2.0-0 libdbus-1-3 libxkbcommon0
  libgssapi-krb5-2 fonts-dejavu-core libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
  libxcb-render-util0 libxcb-render0 libxcb-shape0 libxcb-util1 libxcb-xkb1 libxkbcommon-x11-0"

install_build_debs() {
    command -v dpkg >/dev/null || return 0
    local missing=""
    for p in $BUILD_DEBS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing libraries to bundle:$missing"
        apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
            >/dev/null
    else
        echo "warning: the bundle will lack these system libraries (install them):$missing" >&2
    fi
}

install_build_debs
if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    "$PYTHON" -m pip install --quiet -e '.[package]'
fi

start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/agent-inspector.spec
echo "build: $(($(date +%s) - start)) s"

if [ "${1:-}" = "--test" ]; then
    QT_QPA_PLATFORM=offscreen "$DIST/agent-inspector" gui --self-test
fi
