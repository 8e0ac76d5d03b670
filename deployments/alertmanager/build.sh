#!/usr/bin/env bash
# Builds Prometheus Alertmanager and amtool for the incident tests
# (internal/amtest) from the Go module, and caches the binaries.
#
# The module does not ship the built web UI that ui/web.go embeds
# (ui/app/dist), so `go install` fails. We copy the module to a temporary
# directory, make it writable, add an empty ui/app/dist/index.html and build
# there; nothing else changes. Cold: about 2 minutes on 2 cores. A second
# run finds the cached binaries and returns at once.
#
# Cache: ${OPSGATE_ALERTMANAGER_CACHE:-$HOME/.cache/opsgate/alertmanager-v0.35.0}/bin
# Prints the bin directory on stdout (everything else goes to stderr).
set -euo pipefail

VERSION=v0.35.0
MODULE=github.com/prometheus/alertmanager
CACHE="${OPSGATE_ALERTMANAGER_CACHE:-$HOME/.cache/opsgate/alertmanager-$VERSION}"
BIN="$CACHE/bin"

if [ -x "$BIN/alertmanager" ] && [ -x "$BIN/amtool" ]; then
	echo "$BIN"
	exit 0
fi

GO="${GO:-go}"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "alertmanager: downloading $MODULE@$VERSION" >&2
# Outside any module, so the download does not touch a go.mod.
dir="$(cd "$work" && GOFLAGS=-mod=mod "$GO" mod download -json "$MODULE@$VERSION" |
	sed -n 's/^[[:space:]]*"Dir":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "alertmanager: go mod download gave no module directory" >&2
	exit 1
fi

src="$work/alertmanager"
cp -R "$dir" "$src"
chmod -R u+w "$src"
mkdir -p "$src/ui/app/dist"
printf '<!doctype html><title>Alertmanager</title><p>UI not built (opsgate test build).</p>\n' \
	>"$src/ui/app/dist/index.html"

echo "alertmanager: building alertmanager and amtool (a few minutes on a cold cache)" >&2
mkdir -p "$work/out"
(cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" build -trimpath -o "$work/out/" ./cmd/alertmanager ./cmd/amtool)

# Move into place only when both built, so a half build is never cached.
mkdir -p "$BIN"
mv "$work/out/alertmanager" "$BIN/alertmanager.tmp" && mv "$BIN/alertmanager.tmp" "$BIN/alertmanager"
mv "$work/out/amtool" "$BIN/amtool.tmp" && mv "$BIN/amtool.tmp" "$BIN/amtool"
"$BIN/alertmanager" --version >&2
echo "$BIN"
