#!/usr/bin/env bash
# compat-tests/txn-swap.sh <from> <to>   (java|rmqd each; opt-in, not part of run.sh)
# Store swap with pending transactions: broker <from> stores three half messages (one left pending, one
# committed, one rolled back) and is stopped; broker <to> starts on the SAME store directory, must check back
# the pending one (and never deliver the rolled-back one), and after the COMMIT answer the real topic holds
# exactly the committed two. With <from>=rmqd it also requires that nothing finished before the swap is checked
# back (rmqd writes op records at once; the Java broker batches them every transactionOpBatchInterval, so a
# store it leaves may hold re-put copies of finished messages that any broker will check again).
# Env as run.sh: NS_ADDR, JAVA_BROKER_PORT, RMQD_BROKER_PORT, RMQD_BIN, RUN_DIR.
set -u
COMPAT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$COMPAT_DIR/lib.sh"
FROM=$1 TO=$2
STORE="$RUN_DIR/store"
port_of() { [ "$1" = java ] && echo "$JAVA_BROKER_PORT" || echo "$RMQD_BROKER_PORT"; }
BROKER_PID=""
trap 'stop_broker KILL 5; [ -n "${NS_PID:-}" ] && kill -9 "$NS_PID" 2>/dev/null' EXIT
start_java_ns || exit 1
for k in "$FROM" "$TO"; do mkdir -p "$RUN_DIR/$k-b"; render_broker_conf "$RUN_DIR/$k-b/broker.conf" "$(port_of "$k")" "$STORE"; done
start_broker "$FROM" "$RUN_DIR/$FROM-b/broker.conf" || { echo "start $FROM failed"; exit 1; }
python3 "$COMPAT_DIR/txn_swap.py" phase1 "127.0.0.1:$(port_of "$FROM")" || exit 1
stop_broker TERM 60
start_broker "$TO" "$RUN_DIR/$TO-b/broker.conf" || { echo "start $TO failed"; exit 1; }
python3 "$COMPAT_DIR/txn_swap.py" phase2 "127.0.0.1:$(port_of "$TO")" $([ "$FROM" = rmqd ] && echo strict); rc=$?
echo "swap $FROM -> $TO: rc=$rc"
exit $rc
