#!/usr/bin/env bash
# compat-tests/cpp/capture-golden.sh — regenerate compat-tests/cpp/golden/*.bin + README.md: the request frames the
# C++ SDK (librocketmq from the PyPI rocketmq 0.4.4 wheel) writes, recorded by the frame-aware proxy
# scripts/capture-golden between the client and a REAL Java 5.3.3 NameServer + broker while the CPP-01..13 scenarios
# run; select_golden.py keeps one frame per interesting case; every kept frame is decoded by compat.DecodeCheck
# (the real RemotingCommand.decode). Own ports (NameServer 29886, broker 127.0.0.1:12921, proxies 29887 and 127.0.0.2:12921), so it runs
# beside run.sh. Needs compat-tests/setup.sh (Java) and network for the first cpp_setup.
set -u
CPP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COMPAT_DIR=$(dirname "$CPP_DIR")
export RUN_DIR=${RUN_DIR:-$COMPAT_DIR/.run/cpp-golden-$(date +%Y%m%d-%H%M%S)}
export NS_ADDR=127.0.0.1:${CAP_NS_PORT:-29886}
BPORT=${CAP_BROKER_PORT:-12921}
NS_PROXY=127.0.0.1:${CAP_NS_PROXY_PORT:-29887}
# The broker binds 127.0.0.1:$BPORT but advertises brokerIP1=127.0.0.2, where the proxy listens: the route AND every
# message's storeHost (CONSUMER_SEND_MSG_BACK goes to the storeHost, not to the routed address) lead to the proxy.
B_PROXY=127.0.0.2:$BPORT
OUT=${GOLDEN_OUT:-$CPP_DIR/golden}
. "$COMPAT_DIR/lib.sh"
PLUGIN_SUITES=()
. "$COMPAT_DIR/suites/cpp.sh"
cpp_setup || { echo "cpp_setup failed" >&2; exit 1; }
trap 'for p in ${PROXY_PID:-} ${BROKER_PID:-} ${NS_PID:-}; do kill -9 $p 2>/dev/null; done' EXIT
start_java_ns || { tail -20 "$NS_LOG"; exit 1; }
mkdir -p "$RUN_DIR/jb" "$RUN_DIR/frames"
render_broker_conf "$RUN_DIR/jb/broker.conf" "$BPORT" "$RUN_DIR/jb/store"
sed -i 's/^brokerIP1=.*/brokerIP1=127.0.0.2/' "$RUN_DIR/jb/broker.conf"
start_java_broker "$RUN_DIR/jb/broker.conf" || { broker_logs 50; exit 1; }
python3 "$REPO_DIR/scripts/capture-golden" --prefix f --out "$RUN_DIR/frames" --all --ns-listen "$NS_PROXY" \
  --ns-upstream "$NS_ADDR" --broker-upstream "127.0.0.1:$BPORT" --broker-listen "$B_PROXY" > "$RUN_DIR/proxy.out" 2>&1 &
PROXY_PID=$!
wait_log "$RUN_DIR/proxy.out" ready 10 "$PROXY_PID" || exit 1
# the C++ client only knows the proxied NameServer; rawmq's own checks go straight to the broker (not captured)
mkdir -p "$RUN_DIR/cpp-home"
HOME="$RUN_DIR/cpp-home" "$CPP_VENV/bin/python" "$CPP_DIR/scenarios.py" --ns "$NS_PROXY" --broker "127.0.0.1:$BPORT" \
  --run-id gold --only "$(IFS=,; echo "${CPP_IDS[*]}"),CAP-HB" > "$RUN_DIR/scenarios.out" 2> "$RUN_DIR/scenarios.err"
cat "$RUN_DIR/scenarios.out"
sleep 1
kill -TERM "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; PROXY_PID=""
rc=0
grep -q '"FAIL"' "$RUN_DIR/scenarios.out" && { echo "some scenarios failed on the Java broker during the capture" >&2; rc=1; }
python3 "$CPP_DIR/select_golden.py" "$RUN_DIR/frames" "$OUT" || rc=1
"$COMPAT_DIR/decode-check.sh" "$OUT"/*.bin > "$RUN_DIR/decode.jsonl" || { echo "decode-check failed" >&2; rc=1; }
echo "kept $(ls "$OUT"/*.bin | wc -l) frames in $OUT (of $(ls "$RUN_DIR/frames"/*.bin | wc -l) captured);" \
  "decoded by RemotingCommand.decode: $(grep -c '"code"' "$RUN_DIR/decode.jsonl") (see $RUN_DIR/decode.jsonl)"
stop_broker TERM 60
stop "$NS_PID" TERM 20
exit $rc
