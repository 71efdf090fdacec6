#!/usr/bin/env bash
# compat-tests/rocksdb-java/broker.sh — the real Java 5.5.0 broker (storeType=defaultRocksDB) on a store whose
# consume queue rmqd's RocksCqStore wrote, then rmqd reading what that broker added:
#   1. tests/store_rocksdb_cq.rs write_store_for_java_broker: rmqd's MessageStore writes 200 messages (TopicTest,
#      4 queues, 64 KiB commit-log files); its file consume queue is removed and RocksCqStore writes
#      consumequeue/ (units, max, checkpoint = end of log) from the commit log; config/topics.json is added.
#   2. Java NameServer + broker 5.5.0 (classpath compat-tests/lite-java/server/target/cp.txt) start on it.
#      mqadmin topicStatus must show min 0 / max 50 on each queue, consumeMessage must read queue 2 from
#      offset 0 (bodies rocks-2, rocks-6, ...), queryMsgByOffset must find rocks-29 at queue 1 offset 7,
#      consumeMessage -s must start at the message stored at a given time (RocksDB time search on rmqd's
#      units); then mqadmin sendMessage appends one message through Java and the broker stops (SIGTERM).
#   3. read_store_after_java_broker: RocksCqStore opens what Java left, finds Java's unit, its max and the
#      checkpoint at the end of the log.
# Ports 39876 (NameServer) and 39911 (broker). Leaves everything in $RUN_DIR (default: a new /tmp dir).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
cpf="$root/compat-tests/lite-java/server/target/cp.txt"
[ -s "$cpf" ] || (cd "$(dirname "$(dirname "$cpf")")" && { mvn -o -q package || mvn -q package; }) \
  || { echo "cannot resolve the 5.5.0 classpath ($cpf)"; exit 2; }
CP=$(cat "$cpf")
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/rmqd-rocksdb-broker.XXXXXX)}
STORE="$RUN_DIR/store"; NS=127.0.0.1:39876; PORT=39911; BROKER=rocks-b
JAVA_COMMON=(-XX:+UseSerialGC -XX:-OmitStackTraceInFastThrow -Duser.home="$RUN_DIR/home"
  -Drocketmq.home.dir="$RUN_DIR/rocketmq-home")
fails=0
check() { # check <name> <ERE> <text>: the text goes to $RUN_DIR/<name>.out
  printf '%s\n' "$3" > "$RUN_DIR/$1.out"
  if printf '%s\n' "$3" | grep -Eq -- "$2"; then echo "PASS $1"; else
    echo "FAIL $1: /$2/ not in $RUN_DIR/$1.out:"; cut -c1-200 "$RUN_DIR/$1.out" | head -8; fails=$((fails + 1)); fi
}
mqadmin() {
  timeout 60 java -Xmx256m -XX:TieredStopAtLevel=1 "${JAVA_COMMON[@]}" -cp "$CP" \
    org.apache.rocketmq.tools.command.MQAdminStartup "$@" -n "$NS" 2>&1 | grep -v '^SLF4J' || true
}
wait_log() { # wait_log <file> <text> <seconds> <pid>
  local i
  for ((i = 0; i < $3 * 2; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { echo "process $4 exited:"; tail -30 "$1"; return 1; }
    sleep 0.5
  done
  echo "timeout waiting for '$2' in $1"; tail -30 "$1"; return 1
}
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

mkdir -p "$RUN_DIR"
echo "run dir: $RUN_DIR"
cd "$root"
. scripts/rocksdb-env
RMQD_ROCKSDB_BROKER_STORE="$STORE" cargo test -q --features rocksdb-cq --test store_rocksdb_cq -- \
  --ignored --exact write_store_for_java_broker --nocapture 2>&1 | tee "$RUN_DIR/write.out" | grep -E 'fixture|test result'
first_ts=$(sed -n 's/.*first store time \([0-9]*\).*/\1/p' "$RUN_DIR/write.out")
mkdir -p "$STORE/config" "$RUN_DIR/home" "$RUN_DIR/rocketmq-home"
cat > "$STORE/config/topics.json" <<JSON
{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":$first_ts},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}}}
JSON
cat > "$RUN_DIR/broker.conf" <<CONF
brokerClusterName=RocksCluster
brokerName=$BROKER
brokerId=0
listenPort=$PORT
namesrvAddr=$NS
storePathRootDir=$STORE
storePathCommitLog=$STORE/commitlog
storeType=defaultRocksDB
mappedFileSizeCommitLog=65536
mappedFileSizeConsumeQueue=2000
autoCreateTopicEnable=false
CONF
echo "listenPort=${NS##*:}" > "$RUN_DIR/namesrv.conf"
java -Xms128m -Xmx256m "${JAVA_COMMON[@]}" -cp "$CP" org.apache.rocketmq.namesrv.NamesrvStartup \
  -c "$RUN_DIR/namesrv.conf" > "$RUN_DIR/ns.out" 2>&1 &
PIDS+=($!)
wait_log "$RUN_DIR/ns.out" "boot success" 60 "${PIDS[0]}"
java -Xms512m -Xmx1g -XX:MaxDirectMemorySize=1g "${JAVA_COMMON[@]}" -cp "$CP" \
  org.apache.rocketmq.broker.BrokerStartup -c "$RUN_DIR/broker.conf" > "$RUN_DIR/broker.out" 2>&1 &
BPID=$!; PIDS+=("$BPID")
wait_log "$RUN_DIR/broker.out" "boot success" 120 "$BPID"
sleep 3

for _ in 1 2 3 4 5 6 7 8 9 10; do # until the broker's route has TopicTest
  out=$(mqadmin topicStatus -t TopicTest)
  printf '%s\n' "$out" | grep -q "^$BROKER" && break
  sleep 2
done
n=$(printf '%s\n' "$out" | grep -cE "$BROKER[[:space:]]+[0-3][[:space:]]+0[[:space:]]+50[[:space:]]" || true)
check topicStatus-4-queues-min-0-max-50 "^4$" "$n
$out"
out=$(mqadmin consumeMessage -t TopicTest -b "$BROKER" -i 2 -o 0 -c 50)
n=$(printf '%s\n' "$out" | grep -cE 'queueId=2, .*queueOffset=[0-9]+, .*BODY: rocks-[0-9]+$' || true)
check consumeMessage-50-from-queue-2 "^50$" "$n
$out"
check consumeMessage-first-is-rocks-2 "queueOffset=0, .*BODY: rocks-2$" "$out"
out=$(mqadmin queryMsgByOffset -t TopicTest -b "$BROKER" -i 1 -o 7)
check queryMsgByOffset-q1-o7-is-k29 "Keys:[[:space:]]+\[k29\]" "$out"
# The time search: message 120 (queue 0, offset 30) was stored at or after first_ts + 120 * 2 ms.
t120=$(sed -n 's/.*store time of 120: \([0-9]*\).*/\1/p' "$RUN_DIR/write.out")
if [ -n "$t120" ]; then
  out=$(mqadmin consumeMessage -t TopicTest -b "$BROKER" -i 0 -s "$t120" -c 1)
  check consumeMessage-by-time-starts-at-120 "BODY: rocks-120$" "$out"
fi
out=$(mqadmin sendMessage -t TopicTest -b "$BROKER" -i 3 -p from-java -c TagJ)
check sendMessage-through-java "SEND_OK" "$out"
kill -TERM "$BPID"; wait "$BPID" 2>/dev/null || true
echo "broker stopped"

RMQD_ROCKSDB_BROKER_STORE="$STORE" cargo test -q --features rocksdb-cq --test store_rocksdb_cq -- \
  --ignored --exact read_store_after_java_broker --nocapture 2>&1 | tee "$RUN_DIR/read.out" | grep -E 'java unit|test result|panicked'
grep -q 'test result: ok. 1 passed' "$RUN_DIR/read.out" && echo "PASS rmqd reads Java's unit" || { echo "FAIL rmqd read-back"; fails=$((fails + 1)); }
echo "failures: $fails"
[ "$fails" = 0 ]
