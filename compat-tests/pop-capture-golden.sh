#!/usr/bin/env bash
# compat-tests/pop-capture-golden.sh [java|rmqd] — the POP state a broker leaves in its store, decoded as text.
# Starts the Java NameServer and the broker (default: the Java 5.3.3 oracle), runs POP-01 (pop + ack), POP-02
# (RECONSUME_LATER = CHANGE_MESSAGE_INVISIBLETIME, revived) and POP-03 (SIGKILLed consumer, revived) with run id
# "golden", waits POP_GOLDEN_DRAIN seconds (default 75: POP-01's checkpoints and acks, invisibleTime 60 s, leave
# the timer wheel and the revive service passes them), stops the broker with SIGTERM and runs pop_store_dump.py on
# its store. Java -> tests/golden/pop/ (java-*), rmqd -> $RUN_DIR/dump/ (compare with the Java files).
# Uses the standard compat ports (NameServer 9876, Java broker 10911, rmqd 20911): not beside run.sh.
set -u
KIND=${1:-java}
COMPAT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export RUN_DIR=${RUN_DIR:-$COMPAT_DIR/.run/popgolden-$KIND-$(date +%Y%m%d-%H%M%S)}
. "$COMPAT_DIR/lib.sh"
if [ "$KIND" = java ]; then OUT=${GOLDEN_OUT:-$REPO_DIR/tests/golden/pop}; PORT=$JAVA_BROKER_PORT; else OUT=${GOLDEN_OUT:-$RUN_DIR/dump}; PORT=$RMQD_BROKER_PORT; fi
trap 'for p in ${BROKER_PID:-} ${NS_PID:-}; do kill -9 $p 2>/dev/null; done' EXIT
start_java_ns || { tail -20 "$NS_LOG"; exit 1; }
mkdir -p "$RUN_DIR/broker"
render_broker_conf "$RUN_DIR/broker/broker.conf" "$PORT" "$RUN_DIR/broker/store"
start_broker "$KIND" "$RUN_DIR/broker/broker.conf" || { broker_logs 50; exit 1; }
java_scenarios -- --broker-addr "127.0.0.1:$PORT" --broker-name "$BROKER_NAME" --only POP-01,POP-02,POP-03 \
  --run-id golden --state-dir "$RUN_DIR/state" --ready-timeout 45 2>&1 | grep '"id"' | tee "$RUN_DIR/scenarios.json"
grep -q '"FAIL"' "$RUN_DIR/scenarios.json" && log "a scenario failed: the capture is still written"
log "waiting ${POP_GOLDEN_DRAIN:-75} s for the timer wheel and the revive service"
sleep "${POP_GOLDEN_DRAIN:-75}"
stop_broker TERM 60
mkdir -p "$OUT"
prefix=""; [ "$KIND" = java ] && prefix=java-
python3 "$COMPAT_DIR/pop_store_dump.py" "$RUN_DIR/broker/store" "$RUN_DIR/dump-raw" || exit 1
for f in "$RUN_DIR"/dump-raw/*; do cp "$f" "$OUT/$prefix$(basename "$f")"; done
for f in "$RUN_DIR"/state/pop-wire-*.txt; do [ -e "$f" ] && cp "$f" "$OUT/$prefix$(basename "$f" | sed 's/^pop-//')"; done
cp "$RUN_DIR/scenarios.json" "$OUT/${prefix}scenarios.json"
log "wrote $OUT"
stop "$NS_PID" TERM 20
