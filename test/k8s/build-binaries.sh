#!/usr/bin/env bash
# Builds kube-apiserver, kubectl and etcd from their Go modules into a cache
# outside the repo, once. Idempotent: a binary already in the cache is kept.
# Only the Go module proxy is needed (no GitHub, no release downloads).
#
#   bash test/k8s/build-binaries.sh          # build what is missing
#   K8S_TEST_CACHE=/path bash ...         # other cache root
#
# Pinned releases (change them together with test/k8s/k8s-binaries.ts):
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
# Go modules built (the licence gate reads this line): k8s.io/kubernetes@v1.36.3 go.etcd.io/etcd/server/v3@v3.6.16
set -euo pipefail

CACHE_ROOT=${K8S_TEST_CACHE:-$HOME/.cache/tenantry/k8s}
OUT="$CACHE_ROOT/$K8S_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$OUT"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=local
say() { echo "[build-binaries] $*"; }

have_all() { [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/kubectl" ] && [ -x "$OUT/etcd" ]; }
if have_all; then
  say "cached: $OUT/{kube-apiserver,kubectl,etcd} ($K8S_VERSION, etcd $ETCD_VERSION)"
  exit 0
fi
say "Go: $(go version)"
say "cache: $OUT"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tenantry-k8s-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ ! -x "$OUT/kube-apiserver" ] || [ ! -x "$OUT/kubectl" ]; then
  start=$(date +%s)
  say "kube-apiserver + kubectl $K8S_VERSION: throwaway module in $WORK/k8s"
  mkdir -p "$WORK/k8s" && cd "$WORK/k8s"
  go mod init tenantry.local/k8sbuild >/dev/null 2>&1
  # k8s.io/kubernetes replaces its staging modules with ./staging paths, which
  # `go install pkg@version` refuses; replace each with its published v0.X.Y.
  kgomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^\s*"GoMod": "\(.*\)",*$/\1/p')
  staging_version="v0.${K8S_VERSION#v1.}"
  staging=$(sed -n 's#^\s*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\1#p' "$kgomod" | sort -u)
  say "replacing $(echo "$staging" | wc -l) staging modules with $staging_version (from k8s.io/kubernetes $K8S_VERSION go.mod)"
  go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
  for m in $staging; do go mod edit -replace="$m=$m@$staging_version"; done
  go_line=$(sed -n 's/^go \(.*\)$/\1/p' "$kgomod")
  go mod edit -go="$go_line"
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  say "resolving dependencies (go mod tidy)"
  go mod tidy >/dev/null 2>&1 || go mod tidy
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=$now -X $pkg.gitCommit=module-$K8S_VERSION"
  done
  say "go build kube-apiserver kubectl (several minutes on 2 cores)"
  go build -tags tools -trimpath -ldflags "$ldflags" -o "$WORK/bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  mv "$WORK/bin/kube-apiserver" "$WORK/bin/kubectl" "$OUT/"
  say "kube-apiserver + kubectl built in $(( $(date +%s) - start ))s"
fi

if [ ! -x "$OUT/etcd" ]; then
  start=$(date +%s)
  say "etcd $ETCD_VERSION: throwaway module in $WORK/etcd (server/v3 etcdmain)"
  mkdir -p "$WORK/etcd" && cd "$WORK/etcd"
  go mod init tenantry.local/etcdbuild >/dev/null 2>&1
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go mod tidy >/dev/null 2>&1 || go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$WORK/bin/etcd" .
  mv "$WORK/bin/etcd" "$OUT/"
  say "etcd built in $(( $(date +%s) - start ))s"
fi

"$OUT/kube-apiserver" --version
"$OUT/etcd" --version | sed -n 1p
say "done: $OUT"
