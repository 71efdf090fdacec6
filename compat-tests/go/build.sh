#!/usr/bin/env bash
# compat-tests/go/build.sh — build the Go compat runner: compat-tests/go/bin/compat-go
# Idempotent; with a warm module/build cache and unchanged sources it is a no-op check (~1 s).
# Modules come only from the Go module proxy (GOPROXY as configured); versions are pinned by go.mod/go.sum.
set -euo pipefail
GO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$GO_DIR"
command -v go >/dev/null || { echo "build.sh: go not found" >&2; exit 1; }
t0=$SECONDS
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
go mod download
mkdir -p bin
go build -o bin/compat-go ./cmd/compat-go
echo "build.sh: compat-go built ($(go version | awk '{print $3}'), $((SECONDS - t0)) s)"
