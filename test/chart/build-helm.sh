#!/usr/bin/env bash
# Builds the helm CLI from its Go module into the same out-of-repo cache as
# the test API server, once. Idempotent. Only the Go module proxy is needed.
#
#   bash test/chart/build-helm.sh        # prints the binary's path last
#
# Pinned release (change it together with test/chart/helm-binary.ts):
HELM_VERSION=v3.19.0
# Go modules built (the licence gate reads this line): helm.sh/helm/v3@v3.19.0
# The Kubernetes minor helm assumes when no cluster is asked (template, lint).
K8S_MINOR=36
set -euo pipefail

CACHE_ROOT=${K8S_TEST_CACHE:-$HOME/.cache/tenantry/k8s}
OUT="$CACHE_ROOT/helm-$HELM_VERSION"
if [ -x "$OUT/helm" ]; then
  echo "[build-helm] cached: $OUT/helm"
  exit 0
fi
mkdir -p "$OUT"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=local
start=$(date +%s)
pkg=helm.sh/helm/v3
ldflags="-s -w -X $pkg/internal/version.version=$HELM_VERSION -X $pkg/internal/version.gitTreeState=clean"
for p in pkg/chartutil pkg/lint/rules; do
  ldflags="$ldflags -X $pkg/$p.k8sVersionMajor=1 -X $pkg/$p.k8sVersionMinor=$K8S_MINOR"
done
echo "[build-helm] go install $pkg/cmd/helm@$HELM_VERSION → $OUT"
GOBIN="$OUT" go install -ldflags "$ldflags" "$pkg/cmd/helm@$HELM_VERSION"
echo "[build-helm] built in $(( $(date +%s) - start )) s: $("$OUT/helm" version --short)"
