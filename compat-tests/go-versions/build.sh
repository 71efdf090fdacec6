#!/usr/bin/env bash
# compat-tests/go-versions/build.sh [version ...] — build bin/compat-gv-<version> for each pinned
# github.com/apache/rocketmq-client-go/v2 release (default: every <version>/go.mod in this directory).
# One source tree (cmd/compat-gv) built with -modfile=<version>/go.mod (+ <version>/go.sum) and the build tags in
# <version>/buildtags (API differences between releases). Modules come from the Go module proxy only; go.mod/go.sum
# pin them (-mod=readonly). Idempotent and fast when up to date: a binary newer than its sources, go.mod/go.sum and
# built by the same Go is kept without invoking the go tool.
set -euo pipefail
GV_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$GV_DIR"
command -v go >/dev/null || { echo "go-versions/build.sh: go not found" >&2; exit 1; }
vers=("$@")
if [ ${#vers[@]} -eq 0 ]; then
  for d in v*/; do [ -f "$d/go.mod" ] && vers+=("${d%/}"); done
fi
mkdir -p bin
gover=$(go env GOVERSION)
rc=0
for v in "${vers[@]}"; do
  [ -f "$v/go.mod" ] || { echo "go-versions/build.sh: no $v/go.mod" >&2; rc=1; continue; }
  out="bin/compat-gv-$v" stamp="bin/.compat-gv-$v.stamp"
  tags=$( { tr -d ' \n' < "$v/buildtags"; } 2>/dev/null || true)
  want="$gover tags=$tags"
  if [ -x "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
     && [ -z "$(find cmd "$v" go.mod -newer "$out" -type f 2>/dev/null | head -n 1)" ]; then
    echo "go-versions/build.sh: $out up to date"
    continue
  fi
  t0=$SECONDS
  if GOFLAGS="${GOFLAGS:-} -mod=readonly" go build -modfile="$v/go.mod" -tags "$tags" -o "$out" ./cmd/compat-gv; then
    echo "$want" > "$stamp"
    echo "go-versions/build.sh: $out built ($gover, client $v, tags '${tags}', $((SECONDS - t0)) s)"
  else
    rm -f "$stamp"
    echo "go-versions/build.sh: client $v does not build with $gover" >&2
    rc=1
  fi
done
exit $rc
