#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that envtest needs from the Go
# module proxy (no download site is reachable) and prints the directory to use
# as KUBEBUILDER_ASSETS. The binaries are cached outside the repository, keyed
# by version, so a fresh clone reuses them.
#
#   hack/envtest.sh            build what is missing, print the directory
#   hack/envtest.sh --missing  print the names of the binaries a run would
#                              build, one a line, and build nothing
#
# hack/cluster-binaries.sh numbers these builds among its own: it sets
# PROGRESS_STEP (the number of the first build here) and PROGRESS_TOTAL.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.5}"
CACHE_ROOT="${TRAINFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainforge}"
OUT="$CACHE_ROOT/k8s/$K8S_VERSION-etcd-$ETCD_VERSION"

# find_missing sets missing to the binaries not built yet.
find_missing() {
  missing=()
  [[ -x "$OUT/etcd" ]] || missing+=(etcd)
  [[ -x "$OUT/kube-apiserver" ]] || missing+=(kube-apiserver)
}
find_missing
if [[ "${1:-}" == "--missing" ]]; then
  if [[ ${#missing[@]} -gt 0 ]]; then printf '%s\n' "${missing[@]}"; fi
  exit 0
fi
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$OUT"
  exit 0
fi

mkdir -p "$OUT"
# shellcheck source=hack/k8s-module.sh
source "$(dirname "$0")/k8s-module.sh"
# One build at a time: a second run waits, then finds the binaries built.
k8s_lock "$OUT.lock"
find_missing
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$OUT"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -z "${PROGRESS_TOTAL:-}" ]]; then
  what="${missing[*]}"
  echo "First run: building ${what// / and } from the Go module proxy (about 7 min on 2 cores)." >&2
  echo "They are cached in $CACHE_ROOT and reused by later runs." >&2
  PROGRESS_TOTAL=${#missing[@]}
fi
# shellcheck source=hack/progress.sh
source "$(dirname "$0")/progress.sh"

# kube-apiserver is built in the module graph of every Kubernetes binary
# (hack/k8s-module.sh), so that the simulated cluster's builds reuse what
# this one compiled.
build_apiserver() {
  k8s_build kube-apiserver "$OUT/kube-apiserver" "$(k8s_version_ldflags kube-apiserver)"
}

build_etcd() {
  local dir="$work/etcd"
  mkdir -p "$dir"
  cd "$dir"
  go mod init trainforge.local/envtest-etcd >/dev/null 2>&1
  go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  cat >tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3/etcdmain"
GO
  go mod tidy >/dev/null
  # etcd's main package lives in the root module; etcdmain.Main is what it calls.
  cat >main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  rm tools.go
  # The go command's default flags, as Trainforge's own builds: the standard
  # library compiles once for both (hack/k8s-module.sh).
  go build -ldflags "-s -w" -o "$OUT/etcd.tmp" .
  mv "$OUT/etcd.tmp" "$OUT/etcd"
}

[[ -x "$OUT/etcd" ]] || progress_step "etcd $ETCD_VERSION" "1 min" build_etcd
[[ -x "$OUT/kube-apiserver" ]] || progress_step "kube-apiserver $K8S_VERSION" "6 min" build_apiserver
echo "$OUT"
