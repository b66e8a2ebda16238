#!/usr/bin/env bash
# Builds the reference Prometheus 3.16 (prometheus and promtool) from its Go
# module into a cache outside the repo, once, for the Prometheus differential
# tests and `npm run bench:promql`. Idempotent: what is in the cache is kept.
# About 11 min of CPU on 2 cores. Without the `builtinassets` tag the HTTP API
# works and the web UI is not served, which is all the tests need.
#
#   bash test/prometheus/build-prometheus.sh        # build what is missing
#   PROMETHEUS_CACHE=/path bash ...                 # other cache root
#
# Pinned version (change it together with test/prometheus/prometheus-binaries.ts):
PROMETHEUS_MODULE_VERSION=v0.316.0
PROMETHEUS_VERSION=3.16.0
# Go modules built (the licence gate reads this line): github.com/prometheus/prometheus@v0.316.0
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/support/go-module-build.sh

CACHE_ROOT=${PROMETHEUS_CACHE:-$HOME/.cache/tenantry}
OUT="$CACHE_ROOT/prometheus/$PROMETHEUS_VERSION"
say() { echo "[build-prometheus] $*"; }
took() { echo "$(( $(date +%s) - $1 ))s"; }

if [ -x "$OUT/prometheus" ] && [ -x "$OUT/promtool" ]; then
  say "cached: $OUT/{prometheus,promtool}"
  exit 0
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tenantry-prometheus-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)
module=github.com/prometheus/prometheus
say "prometheus + promtool $PROMETHEUS_VERSION ($module@$PROMETHEUS_MODULE_VERSION): throwaway module in $WORK"
prepare_module "$WORK/prom" "$module" "$PROMETHEUS_MODULE_VERSION"
import_file "$module/cmd/prometheus" "$module/cmd/promtool"
say "resolving dependencies (go mod tidy)"
go mod tidy >/dev/null 2>&1 || go mod tidy
v=github.com/prometheus/common/version
ldflags="-s -w -X $v.Version=$PROMETHEUS_VERSION -X $v.Revision=module-$PROMETHEUS_MODULE_VERSION -X $v.Branch=module"
ldflags="$ldflags -X $v.BuildUser=tenantry -X $v.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)"
say "go build cmd/prometheus cmd/promtool (about 11 min of CPU on 2 cores)"
go build -tags netgo -trimpath -ldflags "$ldflags" -o "$WORK/bin/" "$module/cmd/prometheus" "$module/cmd/promtool"
mkdir -p "$OUT"
mv "$WORK/bin/prometheus" "$WORK/bin/promtool" "$OUT/"
"$OUT/prometheus" --version 2>&1 | sed -n 1p
say "built in $(took "$start"): $OUT"
