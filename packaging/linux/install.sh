#!/usr/bin/env bash
# Installs the built bundle (dist/agent-inspector/) with its desktop integration.
#   packaging/linux/install.sh [PREFIX]      default PREFIX: ~/.local (no root needed)
# AGENT_INSPECTOR_BUNDLE names another built bundle folder (default: dist/agent-inspector).
# Puts the app in PREFIX/lib/agent-inspector, a link in PREFIX/bin, and the .desktop file,
# AppStream metainfo and hicolor icons under PREFIX/share. Uninstall: the same with --remove.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
remove=false
if [ "${1:-}" = "--remove" ]; then remove=true; shift; fi
prefix="${1:-$HOME/.local}"
app="$prefix/lib/agent-inspector"
metainfo="io.github.agentinspector.AgentInspector.metainfo.xml"
icons=(scalable/apps/agent-inspector.svg)
for size in 16 22 24 32 48 64 128 256 512; do icons+=("${size}x${size}/apps/agent-inspector.png"); done

if $remove; then
    rm -rf "$app" "$prefix/bin/agent-inspector" "$prefix/share/applications/agent-inspector.desktop" \
        "$prefix/share/metainfo/$metainfo"
    for icon in "${icons[@]}"; do rm -f "$prefix/share/icons/hicolor/$icon"; done
    echo "removed Agent Inspector from $prefix"
    exit 0
fi

bundle="${AGENT_INSPECTOR_BUNDLE:-$root/dist/agent-inspector}"  # the built one-dir app
[ -x "$bundle/agent-inspector" ] || { echo "no bundle in $bundle: run make package" >&2; exit 1; }
rm -rf "$app"
mkdir -p "$prefix/lib" "$prefix/bin" "$prefix/share/applications" "$prefix/share/metainfo"
cp -a "$bundle" "$app"
ln -sfn "$app/agent-inspector" "$prefix/bin/agent-inspector"
# Exec= names the program on PATH; write the absolute path so a PREFIX/bin off PATH still works.
sed "s|^Exec=agent-inspector|Exec=$app/agent-inspector|" "$here/agent-inspector.desktop" \
    > "$prefix/share/applications/agent-inspector.desktop"
cp "$here/$metainfo" "$prefix/share/metainfo/"
for icon in "${icons[@]}"; do
    install -D -m 644 "$here/icons/hicolor/$icon" "$prefix/share/icons/hicolor/$icon"
done
# Refresh the menus' caches where the tools exist (they are optional).
command -v update-desktop-database >/dev/null && update-desktop-database -q "$prefix/share/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" || true
echo "installed Agent Inspector in $app (run: $prefix/bin/agent-inspector)"
