#!/usr/bin/env bash
# Builds the permissive (Apache-2.0) peers `npm run bench:peers` compares
# Tenantry with, each from its Go module with a throwaway module (only the Go
# module proxy is needed), into a cache outside the repo, once. Idempotent:
# what is in the cache is kept. The bench runs this itself when a binary is
# missing; Prometheus comes from test/prometheus/build-prometheus.sh.
#
#   bash bench/peers/build-peers.sh                  # build what is missing
#   bash bench/peers/build-peers.sh victoria-logs    # one of them
#   PEERS_CACHE=/path bash ...                       # other cache root
#
# Go modules built (the licence gate reads this line): github.com/VictoriaMetrics/VictoriaLogs@v1.52.1 github.com/jaegertracing/jaeger@v1.76.0 github.com/VictoriaMetrics/VictoriaMetrics@v1.151.0
# Pinned versions (change them together with bench/peers/peer-binaries.ts and the line above):
VICTORIA_LOGS_VERSION=v1.52.1
JAEGER_VERSION=v1.76.0
VICTORIA_METRICS_VERSION=v1.151.0
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/support/go-module-build.sh
build_lock build-peers

CACHE_ROOT=${PEERS_CACHE:-$HOME/.cache/tenantry}
say() { echo "[build-peers] $*"; }
took() { echo "$(( $(date +%s) - $1 ))s"; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tenantry-peers-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# build NAME MODULE VERSION PACKAGE BINARY [LDFLAGS]: $CACHE_ROOT/NAME/VERSION/BINARY
build() {
  local name=$1 module=$2 version=$3 package=$4 binary=$5 ldflags=${6:-} out start
  out="$CACHE_ROOT/$name/${version#v}"
  if [ -x "$out/$binary" ]; then say "cached: $out/$binary"; return 0; fi
  start=$(date +%s)
  say "$name ($module@$version, $package): throwaway module in $WORK/$name"
  (
    prepare_module "$WORK/$name" "$module" "$version"
    import_file "$package"
    go mod tidy >/dev/null 2>&1 || go mod tidy
    go build -tags netgo -trimpath -ldflags "-s -w $ldflags" -o "$WORK/$name/bin/$binary" "$package"
  )
  mkdir -p "$out"
  mv "$WORK/$name/bin/$binary" "$out/"
  say "$name built in $(took "$start"): $out/$binary"
}

want() { local n=$1; shift; [ $# -eq 0 ] || [[ " $* " == *" $n "* ]]; }
names=("$@")
vm_ldflags() { echo "-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=$1-$2"; }

if want victoria-logs "${names[@]}"; then
  build victoria-logs github.com/VictoriaMetrics/VictoriaLogs "$VICTORIA_LOGS_VERSION" \
    github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs victoria-logs \
    "$(vm_ldflags victoria-logs "$VICTORIA_LOGS_VERSION")"
fi
if want jaeger "${names[@]}"; then
  build jaeger github.com/jaegertracing/jaeger "$JAEGER_VERSION" \
    github.com/jaegertracing/jaeger/cmd/jaeger jaeger
fi
if want victoria-metrics "${names[@]}"; then
  build victoria-metrics github.com/VictoriaMetrics/VictoriaMetrics "$VICTORIA_METRICS_VERSION" \
    github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics victoria-metrics \
    "$(vm_ldflags victoria-metrics "$VICTORIA_METRICS_VERSION")"
fi
