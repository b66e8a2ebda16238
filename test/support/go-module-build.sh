# Sourced by the scripts that build a test or benchmark binary from its Go
# module with a throwaway module (only the Go module proxy is needed: no
# GitHub, no release downloads). Defines:
#
#   prepare_module DIR MODULE VERSION   a module in DIR whose go.mod is the
#       upstream one (same requirements, replace and exclude directives, so the
#       same dependency versions) under another path, requiring MODULE itself,
#       with the upstream go.sum; the caller is left in DIR.
#   import_file PKG...                  a file importing the commands to build,
#       so `go mod tidy` keeps what they need (build tag `modulebuild`: some
#       modules ship `//go:build tools` files inside package folders).
#   module_license MODULE VERSION       prints the module's licence file text
#       from the module cache (the licence gate reads it).
#   build_lock NAME                     holds ~/.cache/tenantry/NAME.lock until
#       the script exits: a second run of the same build (a bench, a test, CI)
#       waits for the first, then finds its binaries cached, instead of
#       building beside it.
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=local

prepare_module() {
  local dir=$1 module=$2 version=$3 info gomod zip
  mkdir -p "$dir" && cd "$dir"
  info=$(go mod download -json "$module@$version")
  gomod=$(echo "$info" | sed -n 's/^\s*"GoMod": "\(.*\)",*$/\1/p')
  zip=$(echo "$info" | sed -n 's/^\s*"Zip": "\(.*\)",*$/\1/p')
  [ -n "$gomod" ] && [ -n "$zip" ] || { echo "$info" >&2; return 1; }
  cp "$gomod" go.mod && chmod u+w go.mod
  unzip -p "$zip" "$module@$version/go.sum" > go.sum 2>/dev/null || : > go.sum
  go mod edit -module=tenantry.local/modulebuild -require="$module@$version"
}

import_file() {
  {
    echo '//go:build modulebuild'
    echo
    echo 'package modulebuild'
    echo
    echo 'import ('
    for p in "$@"; do echo "	_ \"$p\""; done
    echo ')'
  } > imports.go
}

module_license() {
  local dir
  dir=$(go mod download -json "$1@$2" | sed -n 's/^\s*"Dir": "\(.*\)",*$/\1/p')
  cat "$dir"/LICENSE* "$dir"/LICENCE* 2>/dev/null
}

build_lock() {
  local dir=${TENANTRY_LOCK_DIR:-$HOME/.cache/tenantry}
  mkdir -p "$dir"
  exec {build_lock_fd}>"$dir/$1.lock"
  if ! flock -n "$build_lock_fd"; then
    echo "[$1] another build of $1 is under way: waiting for it"
    flock "$build_lock_fd"
  fi
}
