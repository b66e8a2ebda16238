#!/usr/bin/env bash
# Builds the reference Prometheus 3.16 (prometheus and promtool) from its Go
# module into a cache outside the repo, once, for the Prometheus differential
# tests and `npm run bench:promql`, and the PromQL compliance tester when its
# source can be had. Idempotent: what is in the cache is kept.
# About 11 min of CPU on 2 cores. Without the `builtinassets` tag the HTTP API
# works and the web UI is not served, which is all the tests need.
#
#   bash test/prometheus/build-prometheus.sh        # build what is missing
#   PROMETHEUS_CACHE=/path bash ...                 # other cache root
#   PROMQL_COMPLIANCE_SRC=/path/to/compliance/promql bash ...
#       # build the compliance tester (Apache-2.0) from a checkout when the Go
#       # module proxy does not serve the pinned version (it does not here)
#
# Pinned version (change it together with support/prometheus-binaries.ts):
PROMETHEUS_MODULE_VERSION=v0.316.0
PROMETHEUS_VERSION=3.16.0
# github.com/prometheus/compliance/promql has no tags; this pseudo-version is
# the module's last commit (2026-05-26).
COMPLIANCE_VERSION=v0.0.0-20260526170707-7754e6a52015
# Go modules built (the licence gate reads this line): github.com/prometheus/prometheus@v0.316.0
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/support/go-module-build.sh
build_lock build-prometheus

CACHE_ROOT=${PROMETHEUS_CACHE:-$HOME/.cache/tenantry}
OUT="$CACHE_ROOT/prometheus/$PROMETHEUS_VERSION"
say() { echo "[build-prometheus] $*"; }
took() { echo "$(( $(date +%s) - $1 ))s"; }

TESTER_OUT="$CACHE_ROOT/promql-compliance/$COMPLIANCE_VERSION"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tenantry-prometheus-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The compliance tester, when its source can be had; otherwise a note the
# compliance test skips with (support/prometheus-binaries.ts).
build_tester() {
  [ -x "$TESTER_OUT/promql-compliance-tester" ] && return 0
  [ -f "$TESTER_OUT.unavailable" ] && [ -z "${PROMQL_COMPLIANCE_SRC:-}" ] && return 0
  local module=github.com/prometheus/compliance/promql src="" info zip start
  start=$(date +%s)
  if info=$(go mod download -json "$module@$COMPLIANCE_VERSION" 2>/dev/null); then
    zip=$(echo "$info" | sed -n 's/^\s*"Zip": "\(.*\)",*$/\1/p')
    mkdir -p "$WORK/zip" && (cd "$WORK/zip" && unzip -q "$zip")
    src="$WORK/zip/$module@$COMPLIANCE_VERSION"
  elif [ -n "${PROMQL_COMPLIANCE_SRC:-}" ]; then
    cp -r "$PROMQL_COMPLIANCE_SRC" "$WORK/src"
    src="$WORK/src"
  else
    say "compliance tester not built: the module proxy does not serve $module@$COMPLIANCE_VERSION"
    mkdir -p "$(dirname "$TESTER_OUT")"
    echo "the Go module proxy does not serve $module@$COMPLIANCE_VERSION; set PROMQL_COMPLIANCE_SRC to a checkout of it and run: bash test/prometheus/build-prometheus.sh" > "$TESTER_OUT.unavailable"
    return 0
  fi
  chmod -R u+w "$src"
  (cd "$src" && go build -trimpath -ldflags "-s -w" -o "$WORK/bin/" ./cmd/promql-compliance-tester)
  mkdir -p "$TESTER_OUT"
  mv "$WORK/bin/promql-compliance-tester" "$TESTER_OUT/"
  # The tester's standard query suite ships with it; the test reads it from the cache.
  cp "$src/promql-test-queries.yml" "$TESTER_OUT/"
  rm -f "$TESTER_OUT.unavailable"
  say "promql-compliance-tester built in $(took "$start")"
}

if [ -x "$OUT/prometheus" ] && [ -x "$OUT/promtool" ]; then
  say "cached: $OUT/{prometheus,promtool}"
  build_tester
  exit 0
fi
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
build_tester
