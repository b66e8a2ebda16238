#!/usr/bin/env bash
# Builds, on first use, every binary the test suites run that is built outside
# the repo (from its Go module, or from a Debian package), by running each
# build script in the list below; each script caches under
# ~/.cache/tenantry/<name> and returns at once when its binaries are there.
# `npm test` runs this first (the `pretest` script), so a fresh machine's
# `npm install && npm test` runs every suite.
#
#   bash test/prepare-binaries.sh                  # build what is missing
#   TENANTRY_TEST_SKIP=prometheus,k8s bash ...      # neither build nor require these
#
# TENANTRY_TEST_SKIP takes names from the list (and `containers`, the Docker
# suites, which skip by themselves when no Docker engine is reachable). A
# named prerequisite is not built, and the suites that need it skip, with the
# reason, instead of failing when it is missing (test/support/skip-unless-found.ts
# reads this list too). Every other missing binary is built here, or this
# script fails with one line saying what is missing and the command that fixes it.
set -euo pipefail
cd "$(dirname "$0")/.."

# One line per prerequisite: its name (for TENANTRY_TEST_SKIP) and its build
# script. Add yours here; keep the two columns.
read -r -d '' BUILDS <<'LIST' || true
k8s         test/k8s/build-binaries.sh
helm        test/chart/build-helm.sh
actionlint  test/actionlint/build-actionlint.sh
prometheus  test/prometheus/build-prometheus.sh
LIST

# The oldest Go every script's modules accept (GOTOOLCHAIN=local: no download
# of another toolchain); Prometheus v0.316.0's go.mod asks for 1.26.7.
GO_MIN=1.26.7
say() { echo "[prepare-binaries] $*"; }
fail() { echo "[prepare-binaries] FAILED: $*" >&2; exit 1; }

names=$(echo "$BUILDS" | awk 'NF { print $1 }')
all_names=$(echo "$names" | tr '\n' ',' | sed 's/,$//')
skip=",${TENANTRY_TEST_SKIP:-},"
skip=${skip// /}
for s in ${skip//,/ }; do
  if [ "$s" != containers ] && ! echo "$names" | grep -qx "$s"; then
    fail "TENANTRY_TEST_SKIP names '$s', which is not a prerequisite (known: $all_names,containers)"
  fi
done

# version_at_least A B: A >= B for dotted versions.
version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

go_checked=no
check_go() {
  [ "$go_checked" = yes ] && return 0
  local fix="install Go >= $GO_MIN (https://go.dev/dl/), or skip what needs it: TENANTRY_TEST_SKIP=$all_names npm test"
  command -v go >/dev/null 2>&1 || fail "$1 needs Go to build its test binaries, and go is not on PATH; $fix"
  local v; v=$(go env GOVERSION); v=${v#go}
  version_at_least "$v" "$GO_MIN" || fail "$1 needs Go >= $GO_MIN, this machine has $v; $fix"
  go_checked=yes
}

total_start=$(date +%s)
while read -r name script; do
  [ -n "$name" ] || continue
  if [[ "$skip" == *",$name,"* ]]; then
    say "$name: skipped (TENANTRY_TEST_SKIP); suites needing it skip when it is missing"
    continue
  fi
  [ -f "$script" ] || fail "$name: build script $script is not in the repo"
  log=$(mktemp "${TMPDIR:-/tmp}/tenantry-prepare-$name.XXXXXX")
  start=$(date +%s)
  # A cached prerequisite answers at once with its one "cached" line; a build's
  # own progress lines go through as they come.
  set +e
  bash "$script" </dev/null 2>&1 | tee "$log" | sed -u 's/^/    /'
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -eq 0 ]; then
    took=$(( $(date +%s) - start ))
    grep -q cached "$log" || say "$name: built in $took s"
    rm -f "$log"
    continue
  fi
  # Failed: a missing Go is the likeliest cause on a fresh machine; say so first.
  check_go "$name"
  tail -n 15 "$log" | sed 's/^/    /' >&2
  fail "$name: $script failed after $(( $(date +%s) - start )) s (full log: $log); if the Go module proxy ($(go env GOPROXY)) is unreachable, fix the network or skip: TENANTRY_TEST_SKIP=$name npm test"
done <<<"$BUILDS"
say "all prerequisites ready in $(( $(date +%s) - total_start )) s"
