#!/usr/bin/env bash
# Builds actionlint (the GitHub Actions workflow linter) from its Go module
# into a cache outside the repo, once, for the test that lints
# .github/workflows/. Idempotent. Only the Go module proxy is needed.
#
#   bash test/actionlint/build-actionlint.sh   # prints the binary's path
#   ACTIONLINT_CACHE=/path bash ...             # other cache root
#
# Pinned release (change it together with test/actionlint/actionlint-binary.ts):
ACTIONLINT_VERSION=v1.7.12
# Go modules built (the licence gate reads this line): github.com/rhysd/actionlint@v1.7.12
set -euo pipefail

CACHE_ROOT=${ACTIONLINT_CACHE:-$HOME/.cache/tenantry/actionlint}
OUT="$CACHE_ROOT/actionlint-$ACTIONLINT_VERSION"
if [ -x "$OUT/actionlint" ]; then
  echo "[build-actionlint] cached: $OUT/actionlint"
  exit 0
fi
mkdir -p "$OUT"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=local
start=$(date +%s)
echo "[build-actionlint] go install github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION → $OUT"
GOBIN="$OUT" go install -trimpath -ldflags "-s -w" "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
echo "[build-actionlint] built in $(( $(date +%s) - start )) s: $("$OUT/actionlint" -version | sed -n 1p)"
