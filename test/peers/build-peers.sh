#!/usr/bin/env bash
# Builds the reference systems Loki and Tempo (single binaries) from their Go
# modules into a cache outside the repo, once, for `npm run bench:peers` and the
# differential tests. Idempotent: a binary already in the cache is kept.
# Only the Go module proxy is needed (no GitHub, no release downloads).
# Background: ../shared/LOKI-TEMPO.md.
#
#   bash test/peers/build-peers.sh           # build what is missing
#   PEERS_CACHE=/path bash ...                # other cache root
#   PEERS_ONLY=loki|tempo bash ...            # build one of them
#
# Pinned versions (change them together with test/peers/peer-binaries.ts):
LOKI_VERSION=v3.7.8
# Tempo's module path has no /v2, so its v2.x tags are not module versions; this
# pseudo-version is main on 2025-05-29 (the day v2.8.0-rc.0 was tagged), the one
# the proxy here serves.
TEMPO_VERSION=v1.5.1-0.20250529124718-87c2dc380cec
set -euo pipefail

CACHE_ROOT=${PEERS_CACHE:-$HOME/.cache/tenantry/peers}
LOKI_OUT="$CACHE_ROOT/loki-$LOKI_VERSION"
TEMPO_OUT="$CACHE_ROOT/tempo-$TEMPO_VERSION"
ONLY=${PEERS_ONLY:-}
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=local
# Tempo's checksums are missing from the checksum database mirror; its own
# go.sum (copied below) pins its dependencies.
export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}github.com/grafana/tempo
say() { echo "[build-peers] $*"; }
took() { echo "$(( $(date +%s) - $1 ))s"; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
have_loki() { [ -x "$LOKI_OUT/loki" ] && [ -x "$LOKI_OUT/logcli" ]; }
have_tempo() { [ -x "$TEMPO_OUT/tempo" ] && [ -x "$TEMPO_OUT/tempo-cli" ]; }
if { ! want loki || have_loki; } && { ! want tempo || have_tempo; }; then
  want loki && say "cached: $LOKI_OUT/{loki,logcli}"
  want tempo && say "cached: $TEMPO_OUT/{tempo,tempo-cli}"
  exit 0
fi
say "Go: $(go version)"
say "cache: $CACHE_ROOT"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tenantry-peers-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# prepare_module DIR MODULE VERSION: a throwaway module in DIR whose go.mod is
# the upstream one (same requirements, replace and exclude directives, so the
# same dependency versions) under another module path, requiring the upstream
# module itself, with the upstream go.sum.
prepare_module() {
  local dir=$1 module=$2 version=$3 info gomod zip
  mkdir -p "$dir" && cd "$dir"
  info=$(go mod download -json "$module@$version")
  gomod=$(echo "$info" | sed -n 's/^\s*"GoMod": "\(.*\)",*$/\1/p')
  zip=$(echo "$info" | sed -n 's/^\s*"Zip": "\(.*\)",*$/\1/p')
  [ -n "$gomod" ] && [ -n "$zip" ] || { echo "$info" >&2; return 1; }
  cp "$gomod" go.mod && chmod u+w go.mod
  unzip -p "$zip" "$module@$version/go.sum" > go.sum
  go mod edit -module=tenantry.local/peerbuild -require="$module@$version"
}

# import_file PKG...: a file that imports the commands, so `go mod tidy` keeps
# what they need. Its build tag must not be `tools`: apache/arrow-go ships
# `//go:build tools` files inside package folders.
import_file() {
  {
    echo '//go:build peerbuild'
    echo
    echo 'package peerbuild'
    echo
    echo 'import ('
    for p in "$@"; do echo "	_ \"$p\""; done
    echo ')'
  } > imports.go
}

if want loki && ! have_loki; then
  start=$(date +%s)
  say "loki + logcli $LOKI_VERSION: throwaway module in $WORK/loki"
  prepare_module "$WORK/loki" github.com/grafana/loki/v3 "$LOKI_VERSION"
  # ./pkg/push is a nested module that is not in the zip; without the replace
  # the pinned pseudo-version of github.com/grafana/loki/pkg/push resolves.
  go mod edit -dropreplace=github.com/grafana/loki/pkg/push
  import_file github.com/grafana/loki/v3/cmd/loki github.com/grafana/loki/v3/cmd/logcli
  step=$(date +%s)
  say "loki: resolving dependencies (go mod tidy)"
  go mod tidy >/dev/null 2>&1 || go mod tidy
  say "loki: resolved in $(took "$step")"
  step=$(date +%s)
  vprefix=github.com/grafana/loki/v3/pkg/util/build
  ldflags="-s -w -X $vprefix.Version=$LOKI_VERSION -X $vprefix.Branch=module -X $vprefix.Revision=module-$LOKI_VERSION"
  ldflags="$ldflags -X $vprefix.BuildUser=build-peers -X $vprefix.BuildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  say "loki: go build cmd/loki cmd/logcli (about 6.5 min on 2 cores)"
  go build -tags netgo -trimpath -ldflags "$ldflags" -o "$WORK/bin/" \
    github.com/grafana/loki/v3/cmd/loki github.com/grafana/loki/v3/cmd/logcli
  mkdir -p "$LOKI_OUT"
  mv "$WORK/bin/loki" "$WORK/bin/logcli" "$LOKI_OUT/"
  say "loki: built in $(took "$step") (total $(took "$start"))"
fi

if want tempo && ! have_tempo; then
  start=$(date +%s)
  say "tempo + tempo-cli $TEMPO_VERSION: throwaway module in $WORK/tempo"
  prepare_module "$WORK/tempo" github.com/grafana/tempo "$TEMPO_VERSION"
  import_file github.com/grafana/tempo/cmd/tempo github.com/grafana/tempo/cmd/tempo-cli
  step=$(date +%s)
  say "tempo: resolving dependencies (go mod tidy)"
  go mod tidy >/dev/null 2>&1 || go mod tidy
  say "tempo: resolved in $(took "$step")"
  step=$(date +%s)
  ldflags="-s -w -X main.Version=$TEMPO_VERSION -X main.Branch=module -X main.Revision=module-$TEMPO_VERSION"
  say "tempo: go build cmd/tempo cmd/tempo-cli (about 4 min on 2 cores)"
  go build -trimpath -ldflags "$ldflags" -o "$WORK/bin/" \
    github.com/grafana/tempo/cmd/tempo github.com/grafana/tempo/cmd/tempo-cli
  mkdir -p "$TEMPO_OUT"
  mv "$WORK/bin/tempo" "$WORK/bin/tempo-cli" "$TEMPO_OUT/"
  say "tempo: built in $(took "$step") (total $(took "$start"))"
fi

if want loki; then "$LOKI_OUT/loki" -version | sed -n 1p; fi
if want tempo; then "$TEMPO_OUT/tempo" -version 2>&1 | sed -n 1p; fi
say "done: $CACHE_ROOT"
