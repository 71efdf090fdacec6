#!/usr/bin/env bash
# compat-tests/rocksdb-java/swap.sh — whole brokers swap one storeType=defaultRocksDB store both ways:
#   1. rmqd (a build with --features rocksdb-cq, RMQD_BIN) on a fresh store: mqadmin updateTopic TopicTest (4 queues),
#      the real rocketmq-client 5.5.0 sends 200 messages (queue i % 4, the even ones also into %LMQ%rx via
#      INNER_MULTI_DISPATCH, enableLmq/enableMultiDispatch on); SIGTERM.
#   2. the Java 5.5.0 broker on that store and broker.conf: every queue min 0 / max 50, every body pulled back in order
#      (queue q holds body-q, body-q+4, ...), %LMQ%rx max 100 — read from rmqd's RocksDB consume queue; it sends 40
#      more (body-200..239; 20 into the LMQ); SIGTERM.
#   3. rmqd again: max 60 per queue, all 240 bodies in order, %LMQ%rx max 120 — Java's units read by rmqd; 20 more
#      through rmqd, then
#   4. Java again reads the 260 (max 65, LMQ 130): what rmqd appended after Java's, Java serves; then
#      `rmqd store verify` finds the store the four brokers left sound (Java 5.5's tag index entries included).
# (Topics: rmqd keeps config/topics.json, which Java 5.5.0 imports into its config RocksDB when the JSON's
# dataVersion is newer; nothing here creates topics on Java.) Ports SWAP_NS_PORT (38876) and SWAP_BROKER_PORT
# (38911, also -2/+1/+3). Leaves everything in $RUN_DIR. Ends with "N passed, N failed".
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
cpf="$root/compat-tests/lite-java/server/target/cp.txt"
[ -s "$cpf" ] || (cd "$(dirname "$(dirname "$cpf")")" && { mvn -o -q package || mvn -q package; }) \
  || { echo "cannot resolve the 5.5.0 classpath ($cpf)"; exit 2; }
CP=$(cat "$cpf")
RMQD_BIN=${RMQD_BIN:-$root/target/release/rmqd}
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/rmqd-rocksdb-swap.XXXXXX)}
STORE="$RUN_DIR/store"; NS=127.0.0.1:${SWAP_NS_PORT:-38876}; PORT=${SWAP_BROKER_PORT:-38911}; BROKER=rocks-swap
ADDR=127.0.0.1:$PORT; LMQ='%LMQ%rx'
JAVA_COMMON=(-XX:+UseSerialGC -XX:-OmitStackTraceInFastThrow -Drocketmq.client.logUseSlf4j=false
  -Duser.home="$RUN_DIR/home" -Drocketmq.home.dir="$RUN_DIR/rocketmq-home")
passed=0; failed=0
check() { # check <name> <ERE> <text>: the text goes to $RUN_DIR/<name>.out
  printf '%s\n' "$3" > "$RUN_DIR/$1.out"
  if printf '%s\n' "$3" | grep -Eq -- "$2"; then echo "PASS $1"; passed=$((passed + 1)); else
    echo "FAIL $1: /$2/ not in $RUN_DIR/$1.out:"; cut -c1-300 "$RUN_DIR/$1.out" | head -8; failed=$((failed + 1)); fi
}
mqadmin() {
  timeout 60 java -Xmx256m -XX:TieredStopAtLevel=1 "${JAVA_COMMON[@]}" -cp "$CP" \
    org.apache.rocketmq.tools.command.MQAdminStartup "$@" -n "$NS" 2>&1 | grep -v '^SLF4J' || true
}
client() {
  timeout 120 java -Xmx256m "${JAVA_COMMON[@]}" -cp "$RUN_DIR/classes:$CP" compat.rocksdb.BrokerClient "$@" 2>&1 \
    | grep -v '^SLF4J' || true
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { # wait_port <port> <seconds> <pid> <log>
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    port_open "$1" && return 0
    kill -0 "$3" 2>/dev/null || { echo "process $3 exited:"; tail -30 "$4"; return 1; }
    sleep 0.2
  done
  echo "timeout waiting for port $1"; tail -30 "$4"; return 1
}
wait_route() { # until the NameServer routes TopicTest to the broker (registration follows the start)
  local i out
  for ((i = 0; i < 30; i++)); do
    out=$(mqadmin topicRoute -t TopicTest)
    printf '%s\n' "$out" | grep -q "$ADDR" && return 0
    sleep 1
  done
  echo "TopicTest never routed to $ADDR: $out"; return 1
}
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
stop_broker() { kill -TERM "$1"; wait "$1" 2>/dev/null || true; }

mkdir -p "$RUN_DIR/home" "$RUN_DIR/rocketmq-home" "$RUN_DIR/classes"
echo "run dir: $RUN_DIR; rmqd: $RMQD_BIN"
[ -x "$RMQD_BIN" ] || { echo "no rmqd binary at $RMQD_BIN (build it with --features rocksdb-cq)"; exit 2; }
javac -nowarn -d "$RUN_DIR/classes" -cp "$CP" "$here/broker-client/BrokerClient.java" || exit 2
cat > "$RUN_DIR/broker.conf" <<CONF
brokerClusterName=RocksSwapCluster
brokerName=$BROKER
brokerId=0
listenPort=$PORT
brokerIP1=127.0.0.1
namesrvAddr=$NS
storePathRootDir=$STORE
storePathCommitLog=$STORE/commitlog
storeType=defaultRocksDB
enableLmq=true
enableMultiDispatch=true
mappedFileSizeCommitLog=1048576
autoCreateTopicEnable=false
rmqdEmbeddedNamesrv=false
CONF
echo "listenPort=${NS##*:}" > "$RUN_DIR/namesrv.conf"
java -Xms128m -Xmx256m "${JAVA_COMMON[@]}" -cp "$CP" org.apache.rocketmq.namesrv.NamesrvStartup \
  -c "$RUN_DIR/namesrv.conf" > "$RUN_DIR/ns.out" 2>&1 &
PIDS+=($!)
wait_port "${NS##*:}" 60 "${PIDS[0]}" "$RUN_DIR/ns.out" || exit 1

start_rmqd() { # start_rmqd <n>: sets BPID
  "$RMQD_BIN" -c "$RUN_DIR/broker.conf" > "$RUN_DIR/rmqd-$1.out" 2>&1 &
  BPID=$!; PIDS+=("$BPID")
  wait_port "$PORT" 60 "$BPID" "$RUN_DIR/rmqd-$1.out"
}
start_java() { # start_java <n>: sets BPID
  java -Xms512m -Xmx1g -XX:MaxDirectMemorySize=1g "${JAVA_COMMON[@]}" -cp "$CP" \
    org.apache.rocketmq.broker.BrokerStartup -c "$RUN_DIR/broker.conf" > "$RUN_DIR/java-$1.out" 2>&1 &
  BPID=$!; PIDS+=("$BPID")
  wait_port "$PORT" 120 "$BPID" "$RUN_DIR/java-$1.out"
}
# expect <name> <per-queue max> <lmq max> <first body index past the sends of each queue>: reads every queue
expect() {
  local name=$1 max=$2 lmq=$3 total=$4 out q want i
  out=$(client read "$NS" "$ADDR" "$BROKER" TopicTest "$LMQ")
  for q in 0 1 2 3; do
    want=""
    for ((i = q; i < total; i += 4)); do want+="${want:+,}body-$i"; done
    check "$name-queue-$q" "^queue TopicTest/$q min 0 max $max bodies $want\$" "$out"
  done
  check "$name-lmq" "^queue $LMQ/0 min 0 max $lmq " "$out"
}

echo "--- 1. rmqd writes"
start_rmqd 1 || exit 1
out=$(mqadmin updateTopic -t TopicTest -b "$ADDR" -r 4 -w 4)
check rmqd-updateTopic "success" "$out"
wait_route || exit 1
check rmqd-send-200 "^sent 200 of 200$" "$(client send "$NS" TopicTest 0 200 "$LMQ")"
stop_broker "$BPID"
check rocksdb-in-consumequeue "CURRENT" "$(ls "$STORE/consumequeue")"

echo "--- 2. Java 5.5.0 reads rmqd's RocksDB consume queue, then appends"
start_java 2 || exit 1
wait_route || exit 1
expect java-reads-rmqd 50 100 200
check java-send-40 "^sent 40 of 40$" "$(client send "$NS" TopicTest 200 40 "$LMQ")"
stop_broker "$BPID"

echo "--- 3. rmqd reads what Java appended, then appends"
start_rmqd 3 || exit 1
wait_route || exit 1
expect rmqd-reads-java 60 120 240
check rmqd-send-20 "^sent 20 of 20$" "$(client send "$NS" TopicTest 240 20 "$LMQ")"
stop_broker "$BPID"

echo "--- 4. Java reads it all"
start_java 4 || exit 1
wait_route || exit 1
expect java-reads-all 65 130 260
stop_broker "$BPID"
# Java 5.5 indexes tags too (topic#T#tags): rmqd's store tool accepts the store the four brokers left
check rmqd-store-verify "^store OK" "$("$RMQD_BIN" store verify -c "$RUN_DIR/broker.conf" "$STORE" 2>&1)"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
