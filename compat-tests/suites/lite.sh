# shellcheck shell=bash
# compat-tests/suites/lite.sh — plug-in suite "lite" (issue #23): Lite Topics as RocketMQ 5.5.0 has them, on the
# file consume queue (storeType=default, enableLmq=true, enableMultiDispatch=true) or, with
# LITE_STORE_TYPE=defaultRocksDB, on the RocksDB consume queue (LiteStore.java has both store layouts). Oracle: Java namesrv + broker
# 5.5.0 (the first release with lite code; classpath compat-tests/lite-java/server, Maven Central) and the real
# rocketmq-proxy 5.5.0 (-pm cluster -pc rmq-proxy.json) in front of the broker under test. Clients, all real:
# mqadmin 5.5.0 (MQAdminStartup in-process), the classic rocketmq-client 5.5.0 producer and remoting codec (raw
# POP_LITE_MESSAGE / LITE_SUBSCRIPTION_CTL / ACK frames to the broker) and rocketmq-client-java 5.2.0
# (Producer + MessageBuilder.setLiteTopic, LitePushConsumer) through the proxy. Scenarios in
# compat-tests/lite-java/src/main/java/compat/lite/LiteMain.java (one JVM):
#   LITE-01  mqadmin updateTopic -a +message.type=LITE,+lite.topic.expiration=1440 and updateSubGroup
#            -a +lite.bind.topic=<parent>,+lite.sub.model=Exclusive: GET_TOPIC_CONFIG / GET_SUBSCRIPTIONGROUP_CONFIG
#            return the attributes, topics.json / subscriptionGroup.json hold them
#   LITE-02  classic 5.5.0 producer, __LITE_TOPIC a/b straight to the broker: stored on the parent with
#            INNER_MULTI_DISPATCH=%LMQ%$<parent>$<lite> and INNER_MULTI_QUEUE_OFFSET 0..4, GET_MAX_OFFSET of the lite
#            queues 5, consumequeue/%LMQ%$<parent>$<lite>/0/00000000000000000000 exists (RocksDB: consumequeue/CURRENT,
#            no per-queue dir, QUERY_CONSUME_QUEUE units = the sends' CommitLog offsets)
#   LITE-03  LitePushConsumer subscribeLite x,y,z; gRPC producer setLiteTopic: 10 each + 5 to the unsubscribed w:
#            30 delivered once each, in send order per lite topic, w never; lmqConsumerOffset.json
#            offsetTable["%LMQ%$<parent>$x@<group>"] = {0: 10}; QUERY_CONSUMER_OFFSET of y 10
#   LITE-04  unsubscribeLite(b): later b messages not delivered (5 s), a still delivered
#   LITE-05  exclusive group: a second raw subscriber (LITE_SUBSCRIPTION_CTL PARTIAL_ADD) evicts the first, which
#            gets NOTIFY_UNSUBSCRIBE_LITE 200073 {liteTopic, consumerGroup, clientId}; through the proxy the first
#            LitePushConsumer drops the topic and the second consumes all 5
#   LITE-06  the six mqadmin lite subcommands (getBrokerLiteInfo -d, getParentTopicInfo, getLiteTopicInfo -s,
#            getLiteClientInfo -s, getLiteGroupInfo [-l], triggerLiteDispatch [-c]) and the admin API bodies
#            (200074-200079) with the values of a live subscription
#   LITE-07  error answers: POP_LITE unbound group 29, NORMAL topic 29, unknown group 26, unknown topic 17,
#            maxMsgNum 33 29, nothing with pollTime 0 210; LITE_SUBSCRIPTION_CTL no body 604, empty set 604,
#            unknown group 604; ACK with liteTopic: reviveQid != 999 29, offset > max 208, unbound 29, never popped 13
#   LITE-08  raw wire path: PARTIAL_ADD of an existing lite topic, POP_LITE (reviveQid 999, orderCountInfo 0;0;0,
#            no start/msgOffsetInfo, INNER_MULTI_QUEUE_OFFSET), FIFO block while in flight, redelivery after the
#            invisible time with orderCountInfo counts 1, CHANGE_INVISIBLETIME with liteTopic, ACKs commit offset 3,
#            a parked POP_LITE woken by a new message
#   LITE-09  TTL: broker minLiteTTl=5000, liteTtlCheckInterval=5000; a parent with lite.topic.expiration=1 (minute):
#            its idle lite queue (CQ dir, offset entry, max offset) is gone 60-110 s after its last message (counted
#            from its store timestamp). RocksDB: waited for on GET_PARENT_TOPIC_INFO's liteTopicCount, with no
#            per-queue request meanwhile (Java's RocksDB offset cache would hold the deleted queue again). Set up
#            first, checked last (adds ~40 s to the run). LITE_TTL=0 skips it.
#   LITE-10  mqadmin deleteTopic of the LITE parent: its lite CQ dirs and offsets go, GET_PARENT_TOPIC_INFO 17
#   LITE-11  LMQ quota (enableLmqQuota=true, maxLmqConsumeQueueNum=300): new lite topics accepted up to 300 LMQs on the
#            broker, the next refused LMQ_QUOTA_EXCEEDED 2017, an existing one still accepted, deleteTopic frees them
#   LITE-12  subscription quota (maxLiteSubscriptionCount=1000): a PARTIAL_ADD of 1000 accepted, the next answered
#            LITE_SUBSCRIPTION_QUOTA_EXCEEDED 2018, COMPLETE_REMOVE frees it (11 and 12 run after the others)
#   LITE-G01 Go v5.1.4 (compat-tests/lite-go): LitePushConsumer subscribes g1,g2; a Go producer SetLiteTopic sends 10
#            to each + 5 to g3: the 20 once each in send order per lite topic, g3 never (runs after LiteMain, which
#            creates its parent topic and group)
#   LITE-SW-J2R  store swap (LiteSwap.java, lite_swap_case; after the others, proxy stopped): a broker of its own
#   LITE-SW-R2J  (LITE_SWAP_PORT = JAVA_BROKER_PORT + 30, brokerName lite-swap, same keys incl. storeType) writes: LITE parent
#            (expiration 1440) + bound group (Exclusive), 5 classic sends each to lite topics a and b, the lite CQ units
#            on disk = the sends' CommitLog offsets, a raw client pops 3 of a (maxMsgNum 3) and acks them (offset 3,
#            waited for in lmqConsumerOffset.json); SIGTERM; the other broker starts on the same store and broker.conf:
#            the lite CQ units unchanged, GET_MAX_OFFSET 5/5, QUERY_CONSUMER_OFFSET a 3, topic/group attributes,
#            GET_PARENT_TOPIC_INFO (ttl 1440, 2 lite topics, the group), GET_LITE_TOPIC_INFO a 0..5, the 10 messages
#            by offsetMsgId, the 5 tagged taga by tag (indexType=T, mqadmin queryMsgByKey -p T: the first broker's
#            topic#T#tags index entries); a new subscription pops a-3@3, a-4@4 and b-0..4 (same msgIds, INNER_MULTI_QUEUE_OFFSET)
#            and acks them (offsets 5/5); a new send to a gets lite offset 5 (CQ unit 5), is popped and acked (6);
#            LITE-SW-AFTER, the second broker stopped (SIGTERM): persisted offsets a 6, b 5 (and with RocksDB the units
#            a-0..5, b-0..4 in the database).
#            J2R = Java 5.5.0 -> rmqd, R2J = rmqd -> Java 5.5.0; in the java column Java -> Java answers for both.
# Store types (LITE_STORE_TYPE, default "default"; LiteMain/LiteSwap --store-type): with "default" the checks read the
# file consume queue consumequeue/<lmq>/0/, config/topics.json, subscriptionGroup.json, lmqConsumerOffset.json. With
# "defaultRocksDB" (Java RocksDBMessageStore; rmqd built with --features rocksdb-cq) the consume queue is one RocksDB
# in <store>/consumequeue/ written with the WAL off (a read-only open by another process misses the broker's
# memtable), and topics, groups and ALL consumer offsets (LMQ ones too: no lmqConsumerOffset.json) are the RocksDB KV
# stores config/topics, config/subscriptionGroups, config/consumerOffsets (WAL on). So: LITE-01 reads the two KV
# stores (read-only); LITE-02/09/10 and the offset waits of 03/08/09/10 use the broker's answers (QUERY_CONSUME_QUEUE,
# GET_MAX_OFFSET, QUERY_CONSUMER_OFFSET, GET_PARENT_TOPIC_INFO); the swap reads the first broker's units from the
# database once it stopped (VERIFY) and compares them with what both brokers answer, and LITE-SW-AFTER reads the
# units and config/consumerOffsets of the stopped second broker (org.rocksdb of rocketmq-rocksdb 1.0.6, the jar of
# Java 5.5.0, on the runner's classpath through rocketmq-tools 5.5.0).
# Broker keys for both brokers (BROKER_CONF_EXTRA): storeType=$LITE_STORE_TYPE, enableLmq=true, enableMultiDispatch=true,
# minLiteTTl=5000, liteTtlCheckInterval=5000, enableLmqQuota=true, maxLmqConsumeQueueNum=300,
# maxLiteSubscriptionCount=1000. The Java oracle of this suite is 5.5.0 (JAVA_SERVER_CP), so run it
# alone: COMPAT_SUITES=lite compat-tests/run.sh (opt-in; not in the default COMPAT_SUITES).
# Ports: LITE_PROXY_PORT (gRPC, default 8181), LITE_PROXY_REMOTING_PORT (default 8180); the proxy binds all
# interfaces, the clients use 127.0.0.1 only. LITE_SWAP_PORT (default JAVA_BROKER_PORT + 30) for the swap cases.
# COMPAT_ONLY=LITE-SW-J2R,LITE-SW-R2J runs the swap cases alone (no proxy).

PLUGIN_SUITES+=(lite)

: "${LITE_PROXY_PORT:=8181}"
: "${LITE_PROXY_REMOTING_PORT:=8180}"
# the broker of the store-swap cases (its own name and port, next to the suite's broker; it also binds port - 2,
# port + 1 and port + 3)
: "${LITE_SWAP_PORT:=$((${JAVA_BROKER_PORT:-10911} + 30))}"
: "${LITE_SWAP_BROKER_NAME:=lite-swap}"
# the store type of both brokers (and of the swap cases' broker): default (file consume queues, JSON config files) or
# defaultRocksDB (the RocksDB consume queue in <store>/consumequeue/ and the RocksDB config KV stores; rmqd needs the
# cargo feature rocksdb-cq). LiteMain/LiteSwap get it as --store-type and look at the store accordingly.
: "${LITE_STORE_TYPE:=default}"

lite_ids() {
  local ids=(LITE-01 LITE-02 LITE-03 LITE-04 LITE-05 LITE-06 LITE-07 LITE-08 LITE-10 LITE-11 LITE-12)
  [ "${LITE_TTL:-1}" = 0 ] || ids+=(LITE-09)
  ids+=(LITE-G01 LITE-SW-J2R LITE-SW-R2J)
  echo "${ids[@]}"
}
lite_client_of() { case $1 in LITE-01|LITE-06) echo mqadmin-5.5.0 ;; LITE-G01) echo go-grpc-v5.1.4 ;; *) echo java-lite ;; esac; }

# lite_setup: the 5.5.0 server classpath and the scenario runner (idempotent; also run by setup-all.sh)
lite_setup() {
  local d=${COMPAT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)} mvn=${MVN:-mvn} log fp
  local j="$d/lite-java"
  log="$d/.run/lite-setup.log"; mkdir -p "$d/.run"; : > "$log"
  fp=$( (cat "$j/pom.xml" "$j/server/pom.xml"; find "$j/src" -type f -name '*.java' -print0 | sort -z | xargs -0 cat) | sha256sum | cut -c1-16)
  if [ -s "$j/server/target/cp.txt" ] && [ -s "$j/target/cp.txt" ] && [ -f "$j/target/classes/compat/lite/LiteMain.class" ] \
     && [ "$(cat "$j/target/.fingerprint" 2>/dev/null)" = "$fp" ] \
     && tr ':' '\n' < "$j/server/target/cp.txt" | while read -r f; do [ -f "$f" ] || exit 1; done; then
    echo "lite setup: 5.5.0 server classpath and LiteMain up to date"
    [ -x "$d/lite-go/bin/compat-lite-go" ] || lite_setup_go
    return 0
  fi
  echo "lite setup: resolving namesrv/broker/proxy/tools 5.5.0 and rocketmq-client-java 5.2.0 ..."
  if "$mvn" -B -q -f "$j/server/pom.xml" generate-sources >> "$log" 2>&1 && "$mvn" -B -q -f "$j/pom.xml" package >> "$log" 2>&1; then
    echo "$fp" > "$j/target/.fingerprint"
  else
    echo "lite setup: Maven FAILED, see $log" >&2; tail -20 "$log" >&2; return 1
  fi
  lite_setup_go
}

# the Go runner of LITE-G01 (github.com/apache/rocketmq-clients/golang/v5 v5.1.4, module compat-tests/lite-go)
lite_setup_go() {
  local d=${COMPAT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  command -v go > /dev/null || { echo "lite setup: go not found (LITE-G01 will fail)" >&2; return 1; }
  if (cd "$d/lite-go" && GOFLAGS=-mod=readonly go build -o bin/compat-lite-go ./cmd/compat-lite-go) >> "$d/.run/lite-setup.log" 2>&1; then
    echo "lite setup: compat-lite-go built (golang/v5 v5.1.4)"
  else
    echo "lite setup: Go build FAILED, see $d/.run/lite-setup.log" >&2; return 1
  fi
}

# before the NameServer starts: the Java servers of this run are 5.5.0, and both brokers get the lite keys
# (rmqdIndexTags=true: rmqd indexes tags as topic#T#tags as Java 5.5 always does; Java ignores the key)
lite_before_run() {
  local cpf="$COMPAT_DIR/lite-java/server/target/cp.txt"
  [ -s "$cpf" ] && [ -f "$COMPAT_DIR/lite-java/target/classes/compat/lite/LiteMain.class" ] || lite_setup || return 1
  JAVA_SERVER_CP=$(cat "$cpf")
  case $LITE_STORE_TYPE in default|defaultRocksDB) ;; *) log "lite: LITE_STORE_TYPE=$LITE_STORE_TYPE (default or defaultRocksDB)"; return 1 ;; esac
  BROKER_CONF_EXTRA=$(printf '%s\n' "# lite suite (compat-tests/suites/lite.sh)" "storeType=$LITE_STORE_TYPE" enableLmq=true \
    enableMultiDispatch=true minLiteTTl=5000 liteTtlCheckInterval=5000 enableLmqQuota=true maxLmqConsumeQueueNum=300 \
    maxLiteSubscriptionCount=1000 rmqdIndexTags=true)
  log "lite: Java NameServer/broker 5.5.0 (JAVA_SERVER_CP), broker keys: $(printf '%s' "$BROKER_CONF_EXTRA" | tail -n +2 | paste -sd' ')"
}

# lite_start_proxy <dir> : rocketmq-proxy 5.5.0, cluster mode. Sets LITE_PROXY_PID.
lite_start_proxy() {
  local dir=$1 from=0
  mkdir -p "$dir"
  if port_open 127.0.0.1 "$LITE_PROXY_PORT" || port_open 127.0.0.1 "$LITE_PROXY_REMOTING_PORT"; then
    log "proxy port $LITE_PROXY_PORT or $LITE_PROXY_REMOTING_PORT already in use"; echo "proxy port in use" >> "$dir/proxy.out"; return 1
  fi
  cat > "$dir/rmq-proxy.json" <<EOF
{"rocketMQClusterName":"$CLUSTER_NAME","namesrvAddr":"$NS_ADDR","proxyMode":"cluster","grpcServerPort":$LITE_PROXY_PORT,"remotingListenPort":$LITE_PROXY_REMOTING_PORT}
EOF
  [ -f "$dir/proxy.out" ] && from=$(wc -l < "$dir/proxy.out")
  NAMESRV_ADDR="$NS_ADDR" java -Xms256m -Xmx512m -XX:MaxDirectMemorySize=256m "${JAVA_COMMON[@]}" -Duser.home="$dir" \
    -Drmq.logback.configurationFile=rmq.proxy.logback.xml -Drocketmq.namesrv.addr="$NS_ADDR" \
    -cp "$(cat "$COMPAT_DIR/lite-java/server/target/cp.txt")" \
    org.apache.rocketmq.proxy.ProxyStartup -pc "$dir/rmq-proxy.json" -pm cluster -n "$NS_ADDR" >> "$dir/proxy.out" 2>&1 &
  LITE_PROXY_PID=$!
  wait_log "$dir/proxy.out" "rocketmq-proxy startup successfully" 90 "$LITE_PROXY_PID" "$from" \
    && wait_port 127.0.0.1 "$LITE_PROXY_PORT" 20 "$LITE_PROXY_PID"
}

suite_lite() { # suite_lite <broker addr>
  local A=$1 ids rid="${RID}${CUR_BROKER:0:1}" swids
  ids=$(filter_only $(lite_ids) | paste -sd,)
  [ -n "$ids" ] || return 0
  # the store-swap cases start their own brokers (lite_swap_case); the others use the suite's broker and the proxy
  swids=$(printf '%s\n' ${ids//,/ } | grep '^LITE-SW-' | paste -sd,)
  ids=$(printf '%s\n' ${ids//,/ } | grep -v '^LITE-SW-' | paste -sd,)
  [ -z "$ids" ] || suite_lite_main "$A" "$ids" "$rid"
  [ -z "$swids" ] || lite_swap_cases "$swids"
}

suite_lite_main() { # suite_lite_main <broker addr> <ids> <run id>
  local A=$1 ids=$2 rid=$3 out j="$COMPAT_DIR/lite-java"
  out="$RUN_DIR/lite-$CUR_BROKER"; mkdir -p "$out/home"
  if [ ! -f "$j/target/classes/compat/lite/LiteMain.class" ] || [ ! -s "$j/target/cp.txt" ]; then
    fail_all "lite suite not set up (compat-tests/setup.sh or lite_setup)" ${ids//,/ }; return 0
  fi
  if [ -z "${JAVA_SERVER_CP:-}" ]; then
    fail_all "lite suite needs its 5.5.0 Java servers: run it as COMPAT_SUITES=lite (lite_before_run did not run)" ${ids//,/ }; return 0
  fi
  if ! lite_start_proxy "$out/proxy"; then
    fail_all "rocketmq-proxy 5.5.0 did not start: $(tail -n 5 "$out/proxy/proxy.out" 2>/dev/null | tr '\n' ' ' | cut -c1-300)" ${ids//,/ }
    stop "${LITE_PROXY_PID:-}" KILL 5; LITE_PROXY_PID=""; return 0
  fi
  log "lite: proxy 5.5.0 up on 127.0.0.1:$LITE_PROXY_PORT"
  timeout -k 5 900 java -Xms128m -Xmx512m "${JAVA_COMMON[@]}" -Duser.home="$out/home" \
    -Drmq.logback.configurationFile=rmq.tools.logback.xml -Drocketmq.namesrv.addr="$NS_ADDR" \
    -cp "$j/target/classes:$(cat "$j/target/cp.txt")" compat.lite.LiteMain --ns "$NS_ADDR" --broker-addr "$A" \
    --broker-name "$BROKER_NAME" --cluster "$CLUSTER_NAME" --endpoint "127.0.0.1:$LITE_PROXY_PORT" \
    --store-dir "$RUN_DIR/$CUR_BROKER-broker/store" --store-type "$LITE_STORE_TYPE" --run-id "$rid" --only "$ids" > "$out/lite.out" 2>&1
  local jids=${ids//,LITE-G01/}
  jids=${jids//LITE-G01/}
  ingest_json_lines "$out/lite.out" "$jids" java-lite
  if [[ ",$ids," == *",LITE-G01,"* ]]; then
    if grep -q '"id":"LITE-G01"' "$out/lite.out"; then
      ingest_json_lines "$out/lite.out" LITE-G01 go-grpc-v5.1.4 # its setup failed in LiteMain
    elif [ ! -x "$COMPAT_DIR/lite-go/bin/compat-lite-go" ]; then
      record LITE-G01 go-grpc-v5.1.4 FAIL 0 "compat-lite-go not built (lite_setup)"
    else
      timeout -k 5 120 "$COMPAT_DIR/lite-go/bin/compat-lite-go" -endpoint "127.0.0.1:$LITE_PROXY_PORT" -run-id "$rid" \
        > "$out/lite-go.out" 2>&1
      ingest_json_lines "$out/lite-go.out" LITE-G01 go-grpc-v5.1.4
    fi
  fi
  # which request codes the broker served during the suite (its Prometheus rocketmq_rpc_latency counts, port + 3):
  # kept for the record in $RUN_DIR/lite-<broker>/rpc-codes.txt
  curl -s --max-time 5 "http://127.0.0.1:$((${A##*:} + 3))/metrics" \
    | awk '/^rocketmq_rpc_latency[a-z_]*_count\{/ { if (match($0, /request_code="[^"]*"/)) { c = substr($0, RSTART + 14, RLENGTH - 15); v = $0; sub(/^[^}]*\} */, "", v); split(v, a, " "); n[c] += a[1] } }
           END { for (c in n) printf "%s %d\n", c, n[c] }' | sort > "$out/rpc-codes.txt" 2>/dev/null
  stop "$LITE_PROXY_PID" TERM 20; LITE_PROXY_PID=""
}

# lite_main <timeout_s> <out> <LiteMain args...> : one LiteMain JVM (JSON lines in <out>)
lite_main() {
  local tmo=$1 o=$2 j="$COMPAT_DIR/lite-java"; shift 2
  mkdir -p "$RUN_DIR/lite-swap-home"
  timeout -k 5 "$tmo" java -Xms128m -Xmx512m "${JAVA_COMMON[@]}" -Duser.home="$RUN_DIR/lite-swap-home" \
    -Drmq.logback.configurationFile=rmq.tools.logback.xml -Drocketmq.namesrv.addr="$NS_ADDR" \
    -cp "$j/target/classes:$(cat "$j/target/cp.txt")" compat.lite.LiteMain --ns "$NS_ADDR" --cluster "$CLUSTER_NAME" \
    --endpoint "127.0.0.1:$LITE_PROXY_PORT" --store-type "$LITE_STORE_TYPE" "$@" >> "$o" 2>&1
}

# lite_sub <out> <id> : "STATUS<TAB>detail" of the last JSON line of <id> in <out>, or FAIL when there is none
lite_sub() {
  python3 - "$1" "$2" <<'PY'
import json, sys
last = None
for line in open(sys.argv[1], errors="replace"):
    line = line.strip()
    if not line.startswith('{"id"'): continue
    try: j = json.loads(line)
    except Exception: continue
    if j["id"] == sys.argv[2]: last = j
if last is None: print("FAIL\tthe runner ended before reporting (see %s)" % sys.argv[1])
else: print("%s\t%s" % (last["status"], last.get("detail", "").replace("\t", " ").replace("\n", " ")))
PY
}

# lite_swap_cases <ids> : in the java column the Java -> Java oracle answers for both ids; in the rmqd column
# Java 5.5.0 -> rmqd (LITE-SW-J2R) and rmqd -> Java 5.5.0 (LITE-SW-R2J)
lite_swap_cases() {
  local want=",$1,"
  if [ "$CUR_BROKER" = java ]; then
    lite_swap_case LITE-SW-J2R java java
    [[ $want == *",LITE-SW-R2J,"* ]] && copy_result LITE-SW-J2R LITE-SW-R2J
    [[ $want == *",LITE-SW-J2R,"* ]] || sed -i "/\tLITE-SW-J2R\t/d" "$RESULTS"
  else
    [[ $want == *",LITE-SW-J2R,"* ]] && lite_swap_case LITE-SW-J2R java rmqd
    [[ $want == *",LITE-SW-R2J,"* ]] && lite_swap_case LITE-SW-R2J rmqd java
  fi
  return 0
}

# lite_swap_case <id> <first> <second> : the store of a lite workload moves from the first broker to the second
# (SIGTERM, same broker.conf, same port and name; the suite's broker keeps running on its own port). LITE-SW-WRITE
# on the first broker, LITE-SW-VERIFY on the second (LiteSwap.java).
lite_swap_case() {
  local id=$1 first=$2 second=$3 t0=$SECONDS port=$LITE_SWAP_PORT
  local A="127.0.0.1:$port" dir="$RUN_DIR/lite-swap/$id-$CUR_BROKER" rid="${RID}${id##*-}${CUR_BROKER:0:1}"
  # the suite's broker: start_broker/stop_broker below work on these globals
  local keep_pid=${BROKER_PID:-} keep_log=${BROKER_LOG:-} keep_dir=${BROKER_DIR:-} keep_kind=${BROKER_KIND:-}
  mkdir -p "$dir"
  render_broker_conf "$dir/broker.conf" "$port" "$dir/store" "$LITE_SWAP_BROKER_NAME"
  local out="$dir/lite.out" args=(--broker-addr "$A" --broker-name "$LITE_SWAP_BROKER_NAME" --store-dir "$dir/store" --run-id "$rid")
  log "lite swap $id ($CUR_BROKER column): $first -> $second after SIGTERM on $A"
  local res="" up="" down=""
  if ! start_broker "$first" "$dir/broker.conf"; then
    res="FAIL"$'\t'"$first broker did not start: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
  else
    lite_main 300 "$out" "${args[@]}" --only LITE-SW-WRITE
    res=$(lite_sub "$out" LITE-SW-WRITE)
    [ "${res%%$'\t'*}" = PASS ] || { broker_logs 60 >&2; res="FAIL"$'\t'"on the $first broker, before the swap: ${res#*$'\t'}"; }
  fi
  if [ "${res%%$'\t'*}" = PASS ]; then
    local ts=$SECONDS
    stop_broker TERM 60; wait_port_closed 127.0.0.1 "$port" 20
    down=$((SECONDS - ts))
    echo "----- $second broker on the store $first left (SIGTERM) -----" >> "$BROKER_LOG"
    local t1=$SECONDS
    if ! start_broker "$second" "$dir/broker.conf"; then
      res="FAIL"$'\t'"$second broker did not start on the $first store: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    else
      up=$((SECONDS - t1))
      lite_main 300 "$out" "${args[@]}" --only LITE-SW-VERIFY
      res=$(lite_sub "$out" LITE-SW-VERIFY)
      [ "${res%%$'\t'*}" = PASS ] || broker_logs 80 >&2
      res="${res%%$'\t'*}"$'\t'"$first -> $second (first stopped in ${down}s, second up in ${up}s): ${res#*$'\t'}"
    fi
  fi
  stop_broker TERM 60; wait_port_closed 127.0.0.1 "$port" 20
  # the second broker's SIGTERM writes its offsets (a 6, b 5; at the end of VERIFY the file may still say a 3) and,
  # with RocksDB, flushes its consume queue: LITE-SW-AFTER reads both from the stopped store
  if [ "${res%%$'\t'*}" = PASS ]; then
    local after
    lite_main 120 "$out" "${args[@]}" --only LITE-SW-AFTER
    after=$(lite_sub "$out" LITE-SW-AFTER)
    if [ "${after%%$'\t'*}" = PASS ]; then
      res="$res; after its SIGTERM: ${after#*$'\t'}"
    else
      res="FAIL"$'\t'"${res#*$'\t'}; but after the $second broker's SIGTERM: ${after#*$'\t'}"
    fi
  fi
  BROKER_PID=$keep_pid BROKER_LOG=$keep_log BROKER_DIR=$keep_dir BROKER_KIND=$keep_kind
  record "$id" java-lite "${res%%$'\t'*}" $(( (SECONDS - t0) * 1000 )) "${res#*$'\t'}"
}
