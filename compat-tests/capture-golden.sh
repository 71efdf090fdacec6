#!/usr/bin/env bash
# compat-tests/capture-golden.sh — regenerate tests/golden/*.bin: the REAL Java client's request frames
# (JSON and ROCKETMQ header codecs) recorded by scripts/capture-golden between the client and a real Java
# NameServer + broker. Uses its own ports (NameServer 29876, broker 30911, proxies 29877/30991) so it can run
# beside run.sh. Then checks every captured frame with compat.DecodeCheck.
set -u
COMPAT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export RUN_DIR=${RUN_DIR:-$COMPAT_DIR/.run/golden-$(date +%Y%m%d-%H%M%S)}
export NS_ADDR=127.0.0.1:29876
. "$COMPAT_DIR/lib.sh"
OUT=${GOLDEN_OUT:-$REPO_DIR/tests/golden}
mkdir -p "$OUT"
trap 'for p in ${PROXY_PID:-} ${BROKER_PID:-} ${NS_PID:-}; do kill -9 $p 2>/dev/null; done' EXIT
start_java_ns || { tail -20 "$NS_LOG"; exit 1; }
render_broker_conf "$RUN_DIR/jb/broker.conf" 30911 "$RUN_DIR/jb/store" 2>/dev/null || {
  mkdir -p "$RUN_DIR/jb"; render_broker_conf "$RUN_DIR/jb/broker.conf" 30911 "$RUN_DIR/jb/store"; }
start_java_broker "$RUN_DIR/jb/broker.conf" || { broker_logs 50; exit 1; }
rc=0
for variant in json rocketmq; do
  prefix="java-$variant"
  rm -f "$OUT/$prefix"-*.bin "$OUT/$prefix.index.tsv"
  python3 "$REPO_DIR/scripts/capture-golden" --prefix "$prefix" --out "$OUT" --ns-listen 127.0.0.1:29877 \
    --ns-upstream "$NS_ADDR" --broker-upstream 127.0.0.1:30911 --broker-listen 127.0.0.1:30991 \
    > "$RUN_DIR/proxy-$variant.out" 2>&1 &
  PROXY_PID=$!
  wait_log "$RUN_DIR/proxy-$variant.out" ready 10 "$PROXY_PID" || exit 1
  jopt=(); [ $variant = rocketmq ] && jopt=(-Drocketmq.serialize.type=ROCKETMQ)
  NS_ADDR=127.0.0.1:29877 java_scenarios "${jopt[@]}" -- --ns 127.0.0.1:29877 --broker-addr 127.0.0.1:30991 \
    --only CAP --run-id "g$variant" | grep '"id"' | tee "$RUN_DIR/cap-$variant.json"
  grep -q '"PASS"' "$RUN_DIR/cap-$variant.json" || rc=1
  kill -TERM "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; PROXY_PID=""
done
# every captured frame must decode with the real RemotingCommand.decode
"$COMPAT_DIR/decode-check.sh" "$OUT"/java-*.bin > "$RUN_DIR/decode.jsonl" || rc=1
echo "captured $(ls "$OUT"/*.bin | wc -l) frames into $OUT; decoded: $(grep -c '"code"' "$RUN_DIR/decode.jsonl") (see $RUN_DIR/decode.jsonl)"
stop_broker TERM 60
stop "$NS_PID" TERM 20
exit $rc
