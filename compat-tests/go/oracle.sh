#!/usr/bin/env bash
# compat-tests/go/oracle.sh — start a private Java NameServer + Java broker (the oracle) for developing/validating the
# Go scenarios without disturbing the shared 9876/10911 instances. Prints NS/broker addresses; stop with
#   kill $(cat "$RUN_DIR"/pids)
# Env: NS_ADDR (default 127.0.0.1:19876), JAVA_BROKER_PORT (default 12911), RUN_DIR.
set -euo pipefail
GO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NS_ADDR=${NS_ADDR:-127.0.0.1:19876}
export JAVA_BROKER_PORT=${JAVA_BROKER_PORT:-12911}
export RUN_DIR=${RUN_DIR:-$GO_DIR/../.run/go-oracle-$(date +%H%M%S)}
. "$GO_DIR/../lib.sh"
start_java_ns "$RUN_DIR/java-ns"
mkdir -p "$RUN_DIR/jb"
render_broker_conf "$RUN_DIR/jb/broker.conf" "$JAVA_BROKER_PORT" "$RUN_DIR/jb/store"
start_java_broker "$RUN_DIR/jb/broker.conf"
echo "$NS_PID $BROKER_PID" > "$RUN_DIR/pids"
echo "RUN_DIR=$RUN_DIR NS=$NS_ADDR BROKER=127.0.0.1:$JAVA_BROKER_PORT pids=$NS_PID,$BROKER_PID"
