#!/usr/bin/env bash
# compat-tests/go/suite.sh — everything Go-side against ONE running broker, JSON lines on stdout:
#   compat-go scenarios (ci: G01-G09, full: + G10), then X01 and X02 (need the Java classpath from setup.sh).
# Usage: suite.sh -ns 127.0.0.1:9876 -broker 127.0.0.1:PORT [-broker-name broker-a] -run-id R [-profile ci|full]
# Exit 1 if any line FAILed. Logs under $RUN_DIR (default compat-tests/.run/go-<runid>).
set -uo pipefail
GO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NS=127.0.0.1:9876; BROKER=127.0.0.1:20911; BNAME=broker-a; RID=$(date +%s); PROFILE=${COMPAT_PROFILE:-ci}
while [ $# -gt 0 ]; do
  case $1 in -ns) NS=$2;; -broker) BROKER=$2;; -broker-name) BNAME=$2;; -run-id) RID=$2;; -profile) PROFILE=$2;;
    *) echo "unknown $1" >&2; exit 2;; esac; shift 2
done
: "${RUN_DIR:=$GO_DIR/../.run/go-$RID}"; export RUN_DIR; mkdir -p "$RUN_DIR"
[ -x "$GO_DIR/bin/compat-go" ] || "$GO_DIR/build.sh" >&2 || exit 1
rc=0
sel=ci; [ "$PROFILE" = full ] && sel=all
"$GO_DIR/bin/compat-go" -ns "$NS" -broker "$BROKER" -broker-name "$BNAME" -run "$sel" -run-id "$RID" \
  -log "$RUN_DIR/compat-go.log" || rc=1
"$GO_DIR/x01.sh" -ns "$NS" -broker "$BROKER" -run-id "$RID" || rc=1
"$GO_DIR/x02.sh" -ns "$NS" -broker "$BROKER" -run-id "$RID" || rc=1
exit $rc
