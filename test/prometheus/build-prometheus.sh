#!/usr/bin/env bash
# Brings the reference Prometheus (Debian's package, unpacked: no system
# install, no root needed) and the PromQL compliance tester (built from its Go
# module) into a cache outside the repo, once, for the Prometheus differential
# and compliance tests and `npm run bench:promql`. Idempotent: what is already
# in the cache is kept.
#
#   bash test/prometheus/build-prometheus.sh        # fetch/build what is missing
#   PROMETHEUS_CACHE=/path bash ...                 # other cache root
#   PROMQL_COMPLIANCE_SRC=/path/to/compliance/promql bash ...
#       # build the tester from a source checkout of that module when the Go
#       # module proxy does not serve the pinned version
#
# Pinned versions (change them together with test/prometheus/prometheus-binaries.ts):
PROMETHEUS_DEB_VERSION=2.42.0+ds-5+deb12u1
# github.com/prometheus/compliance/promql has no tags; this pseudo-version is
# the module's last commit (2026-05-26).
COMPLIANCE_VERSION=v0.0.0-20260526170707-7754e6a52015
set -euo pipefail

CACHE_ROOT=${PROMETHEUS_CACHE:-$HOME/.cache/tenantry}
PROM_OUT="$CACHE_ROOT/prometheus/$PROMETHEUS_DEB_VERSION"
TESTER_OUT="$CACHE_ROOT/promql-compliance/$COMPLIANCE_VERSION"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=local
say() { echo "[build-prometheus] $*"; }
took() { echo "$(( $(date +%s) - $1 ))s"; }

have_prom() { [ -x "$PROM_OUT/prometheus" ] && [ -x "$PROM_OUT/promtool" ]; }
have_tester() { [ -x "$TESTER_OUT/promql-compliance-tester" ] && [ -f "$TESTER_OUT/promql-test-queries.yml" ]; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tenantry-prometheus-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if have_prom; then
  say "cached: $PROM_OUT/{prometheus,promtool}"
else
  start=$(date +%s)
  say "prometheus $PROMETHEUS_DEB_VERSION: apt-get download + dpkg-deb -x into $PROM_OUT"
  cd "$WORK"
  # apt-get download needs no root; the package lists may need a refresh first
  # (that one step does need root, as `apt-get update` always does).
  if ! apt-get download "prometheus=$PROMETHEUS_DEB_VERSION" >/dev/null 2>&1; then
    say "package unknown to apt's lists: apt-get update, then retry"
    apt-get update >/dev/null
    apt-get download "prometheus=$PROMETHEUS_DEB_VERSION" >/dev/null
  fi
  dpkg-deb -x prometheus_*.deb "$WORK/unpacked"
  mkdir -p "$PROM_OUT"
  cp "$WORK/unpacked/usr/bin/prometheus" "$WORK/unpacked/usr/bin/promtool" "$PROM_OUT/"
  say "prometheus: unpacked in $(took "$start")"
fi

if have_tester; then
  say "cached: $TESTER_OUT/promql-compliance-tester"
else
  start=$(date +%s)
  module=github.com/prometheus/compliance/promql
  src=""
  if info=$(go mod download -json "$module@$COMPLIANCE_VERSION" 2>/dev/null); then
    zip=$(echo "$info" | sed -n 's/^\s*"Zip": "\(.*\)",*$/\1/p')
    mkdir -p "$WORK/zip" && (cd "$WORK/zip" && unzip -q "$zip")
    src="$WORK/zip/$module@$COMPLIANCE_VERSION"
    say "promql-compliance-tester $COMPLIANCE_VERSION from the module proxy"
  elif [ -n "${PROMQL_COMPLIANCE_SRC:-}" ]; then
    cp -r "$PROMQL_COMPLIANCE_SRC" "$WORK/src"
    src="$WORK/src"
    say "promql-compliance-tester: module proxy refused $COMPLIANCE_VERSION; building the checkout $PROMQL_COMPLIANCE_SRC"
  else
    # Not fatal: the Prometheus suites run without it and the compliance test
    # skips, naming this cause (test/prometheus/prometheus-binaries.ts).
    say "not built: the module proxy does not serve $module@$COMPLIANCE_VERSION;"
    say "set PROMQL_COMPLIANCE_SRC to a checkout of that module (its promql/ folder) and re-run"
    # The compliance test reads this note and skips with it as its reason.
    mkdir -p "$(dirname "$TESTER_OUT")"
    echo "the Go module proxy does not serve $module@$COMPLIANCE_VERSION; set PROMQL_COMPLIANCE_SRC to a checkout of it and run: bash test/prometheus/build-prometheus.sh" > "$TESTER_OUT.unavailable"
    "$PROM_OUT/prometheus" --version 2>&1 | sed -n 1p
    exit 0
  fi
  chmod -R u+w "$src"
  cd "$src"
  say "promql-compliance-tester: go build (its own go.mod and go.sum)"
  go build -trimpath -ldflags "-s -w" -o "$WORK/bin/" ./cmd/promql-compliance-tester
  mkdir -p "$TESTER_OUT"
  mv "$WORK/bin/promql-compliance-tester" "$TESTER_OUT/"
  # The tester's standard query suite ships with it; the compliance test reads
  # it from the cache (it is not copied into this repository).
  cp promql-test-queries.yml "$TESTER_OUT/"
  rm -f "$TESTER_OUT.unavailable"
  say "promql-compliance-tester: built in $(took "$start")"
fi

"$PROM_OUT/prometheus" --version 2>&1 | sed -n 1p
say "done: $PROM_OUT, $TESTER_OUT"
