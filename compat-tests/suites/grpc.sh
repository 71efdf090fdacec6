# shellcheck shell=bash
# compat-tests/suites/grpc.sh — plug-in suite "grpc" (issue #22 item 4): the gRPC clients through the REAL
# rocketmq-proxy 5.3.3 (org.apache.rocketmq.proxy.ProxyStartup -pm cluster, Maven Central) in front of the broker
# under test. Clients: rocketmq-client-java 5.2.0 (compat-tests/grpc-java, a Maven project of its own: the shaded
# gRPC client never shares a classpath with rocketmq-client 5.3.3) and github.com/apache/rocketmq-clients/golang/v5
# v5.1.4 (compat-tests/grpc-go, its own Go module). The proxy's needs from the broker: a NameServer route for a topic
# named after the cluster (clusterTopicEnable), DefaultHeartBeatSyncerTopic (UPDATE_AND_CREATE_TOPIC + a
# BROADCASTING push consumer), GET_TOPIC_CONFIG 351 (message.type check), GET_SUBSCRIPTIONGROUP_CONFIG 352 (FIFO
# flag, retry policy), SEND_MESSAGE_V2, POP (initMode MAX; a new group starts at 0 while the first message is in memory), ACK /
# BATCH_ACK / CHANGE_INVISIBLETIME, CONSUMER_SEND_MSG_BACK, END_TRANSACTION and the transaction check-back.
# Topics (GRPC_<id>_<run>_t) are created with mqadmin updateTopic -a +message.type=<NORMAL|FIFO|DELAY|TRANSACTION>
# (the proxy's enableTopicMessageTypeCheck stays on); groups GRPC_<id>_<run>_g are auto-created, except the FIFO
# ones (updateSubGroup -o true) and the DLQ one (updateSubGroup -r 1, i.e. maxAttempts 2).
#   GRPC-J01 / G01  normal send (tag, keys, user property) + SimpleConsumer receive/ack: 20 once each, fields and
#                   message id kept, deliveryAttempt 1
#   GRPC-J02 / G02  FIFO topic, orderly group: 3 message groups x 8, each group received in send order, once each
#                   (the proxy pops with order=true)
#   GRPC-J03 / G03  delay (deliveryTimestamp now+3..5 s): none delivered before its time, none later than 15 s
#   GRPC-J04 / G04  transaction: the committed one delivered, the rolled-back one not, an open one resolved COMMIT by
#                   the broker's check-back relayed by the proxy to the client's checker (transactionCheckInterval 2 s)
#   GRPC-J05        changeInvisibleDuration(3 s) on 3 received messages: each back once, deliveryAttempt 2, not
#                   before 3 s
#   GRPC-J06 / G05  PushConsumer (Java: tag filter TagA||TagB, 20 of 30 match): consumed once each
#   GRPC-J07        maxAttempts -> DLQ: a push consumer answers FAILURE; attempts [1, 2] each, no third: the proxy's
#                   next pop sees reconsumeTimes >= maxAttempts and forwards the message (CONSUMER_SEND_MSG_BACK,
#                   delayLevel -1) instead; mqadmin queryMsgByKey, polled while the consumer stays up, finds all 3
#                   message ids in %DLQ%<group>
#   GRPC-J08        the proxy restarted with "enableBatchAck": true: 20 received and acked; the broker's
#                   rocketmq_rpc_latency counts (Prometheus, listenPort + 3) grew for batch_ack_message and not for
#                   ack_message
#   GRPC-J09        recall: two delay messages for the same time (DELAY topic); Producer.recallMessage with the first
#                   one's receipt handle (the proxy sends RECALL_MESSAGE 370; recallMessageEnable=true in the broker
#                   conf): only the second is received, the first not within 3 s after it
# Ports: GRPC_PROXY_PORT (gRPC, default 8081) and GRPC_PROXY_REMOTING_PORT (default 8080); the proxy binds all
# interfaces (no setting for it): the clients only ever use 127.0.0.1.
# In the default COMPAT_SUITES; alone: COMPAT_SUITES=grpc compat-tests/run.sh (see compat-tests/README.md)

PLUGIN_SUITES+=(grpc)

: "${GRPC_PROXY_PORT:=8081}"
: "${GRPC_PROXY_REMOTING_PORT:=8080}"
GRPC_JAVA_IDS=(GRPC-J01 GRPC-J02 GRPC-J03 GRPC-J04 GRPC-J05 GRPC-J06 GRPC-J07 GRPC-J09)
GRPC_GO_IDS=(GRPC-G01 GRPC-G02 GRPC-G03 GRPC-G04 GRPC-G05)

grpc_ids() { echo "${GRPC_JAVA_IDS[@]}" GRPC-J08 "${GRPC_GO_IDS[@]}"; }
grpc_client_of() { case $1 in GRPC-G*) echo grpcgo-v5.1.4 ;; *) echo grpcjava-5.2.0 ;; esac; }

# grpc_setup: proxy classpath, client-java build, Go module download + build (idempotent; also run by setup.sh)
grpc_setup() {
  local d=${COMPAT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)} mvn=${MVN:-mvn} log rc=0
  log="$d/.run/grpc-setup.log"; mkdir -p "$d/.run"; : > "$log"
  local j="$d/grpc-java" fp
  fp=$( (cat "$j/pom.xml" "$j/proxy/pom.xml"; find "$j/src" -type f -name '*.java' -print0 | sort -z | xargs -0 cat) | sha256sum | cut -c1-16)
  if [ -s "$j/proxy/target/cp.txt" ] && [ -s "$j/target/cp.txt" ] && [ -f "$j/target/classes/compat/grpc/GrpcMain.class" ] \
     && [ "$(cat "$j/target/.fingerprint" 2>/dev/null)" = "$fp" ] \
     && tr ':' '\n' < "$j/proxy/target/cp.txt" | while read -r f; do [ -f "$f" ] || exit 1; done; then
    echo "grpc setup: proxy classpath and client-java up to date"
  else
    echo "grpc setup: resolving rocketmq-proxy 5.3.3 and rocketmq-client-java 5.2.0 ..."
    if "$mvn" -B -q -f "$j/proxy/pom.xml" generate-sources >> "$log" 2>&1 && "$mvn" -B -q -f "$j/pom.xml" package >> "$log" 2>&1; then
      echo "$fp" > "$j/target/.fingerprint"
    else
      echo "grpc setup: Maven FAILED, see $log" >&2; tail -20 "$log" >&2; rc=1
    fi
  fi
  if command -v go > /dev/null; then
    if (cd "$d/grpc-go" && GOFLAGS=-mod=readonly go mod download && GOFLAGS=-mod=readonly go build -o bin/compat-grpc-go ./cmd/compat-grpc-go) >> "$log" 2>&1; then
      echo "grpc setup: compat-grpc-go built (golang/v5 v5.1.4)"
    else
      echo "grpc setup: Go build FAILED, see $log" >&2; tail -20 "$log" >&2; rc=1
    fi
  else
    echo "grpc setup: go not found" >&2; rc=1
  fi
  return $rc
}

# grpc_start_proxy <dir> <enableBatchAck true|false> : sets GRPC_PROXY_PID
grpc_start_proxy() {
  local dir=$1 batch=$2 cpf="$COMPAT_DIR/grpc-java/proxy/target/cp.txt" from=0
  mkdir -p "$dir"
  [ -s "$cpf" ] || { echo "proxy classpath missing ($cpf): run compat-tests/setup.sh" >> "$dir/proxy.out"; return 1; }
  if port_open 127.0.0.1 "$GRPC_PROXY_PORT" || port_open 127.0.0.1 "$GRPC_PROXY_REMOTING_PORT"; then
    log "proxy port $GRPC_PROXY_PORT or $GRPC_PROXY_REMOTING_PORT already in use"; echo "proxy port in use" >> "$dir/proxy.out"; return 1
  fi
  cat > "$dir/rmq-proxy.json" <<EOF
{"rocketMQClusterName":"$CLUSTER_NAME","namesrvAddr":"$NS_ADDR","proxyMode":"cluster","grpcServerPort":$GRPC_PROXY_PORT,"remotingListenPort":$GRPC_PROXY_REMOTING_PORT,"enableBatchAck":$batch,"transactionHeartbeatPeriodSecond":2}
EOF
  local try
  for try in 1 2 3; do
    [ -f "$dir/proxy.out" ] && from=$(wc -l < "$dir/proxy.out")
    NAMESRV_ADDR="$NS_ADDR" java -Xms256m -Xmx512m -XX:MaxDirectMemorySize=256m "${JAVA_COMMON[@]}" -Duser.home="$dir" \
      -Drmq.logback.configurationFile=rmq.proxy.logback.xml -Drocketmq.namesrv.addr="$NS_ADDR" -cp "$(cat "$cpf")" \
      org.apache.rocketmq.proxy.ProxyStartup -pc "$dir/rmq-proxy.json" -pm cluster -n "$NS_ADDR" >> "$dir/proxy.out" 2>&1 &
    GRPC_PROXY_PID=$!
    if wait_log "$dir/proxy.out" "rocketmq-proxy startup successfully" 90 "$GRPC_PROXY_PID" "$from"; then
      wait_port 127.0.0.1 "$GRPC_PROXY_PORT" 20 "$GRPC_PROXY_PID"; return
    fi
    # a broker that just started may not be in the NameServer's route of the cluster-named topic yet: the proxy
    # then exits with "create system broadcast topic DefaultHeartBeatSyncerTopic failed on cluster <name>"
    stop "$GRPC_PROXY_PID" KILL 5
    tail -n +"$((from + 1))" "$dir/proxy.out" | grep -q "create system broadcast topic" || return 1
    log "proxy: no route for the cluster topic yet (try $try), retrying in 3 s"; sleep 3
  done
  return 1
}

# grpc_rpc_count <broker port> <request_code desc> : sum of rocketmq_rpc_latency counts on the broker's /metrics
grpc_rpc_count() {
  curl -s --max-time 5 "http://127.0.0.1:$(($1 + 3))/metrics" \
    | awk -v c="request_code=\"$2\"" '/^rocketmq_rpc_latency[a-z_]*_count\{/ && index($0, c) {v = $0; sub(/^[^}]*\} */, "", v); split(v, a, " "); s += a[1]} END {printf "%.0f", s}'
}

# grpc_ingest <json-lines file> <ids...> : records each scenario line (PASS lines of J07 wait for the DLQ check)
grpc_ingest() {
  local f=$1 id client status ms detail seen=","; shift
  while IFS=$'\t' read -r id client status ms detail; do
    seen="$seen$id,"
    if [ "$id" = GRPC-J07 ] && [ "$status" = PASS ]; then GRPC_J07=("$client" "$ms" "$detail"); continue; fi
    if [ "$id" = GRPC-J08 ] && [ "$status" = PASS ]; then GRPC_J08=("$client" "$ms" "$detail"); continue; fi
    record "$id" "$client" "$status" "$ms" "$detail"
  done < <(python3 -c '
import json,sys
for line in open(sys.argv[1], errors="replace"):
    line=line.strip()
    if not line.startswith("{\"id\""): continue
    try: j=json.loads(line)
    except Exception: continue
    print("\t".join([j["id"], j.get("client",""), j["status"], str(j.get("ms",0)), j.get("detail","").replace("\t"," ").replace("\n"," ")]))
' "$f")
  for id in "$@"; do
    [[ $seen == *",$id,"* ]] || record "$id" "$(grpc_client_of "$id")" FAIL 0 "runner ended before reporting; see $f"
  done
}

grpc_java() { # grpc_java <out> <ids comma list>
  local j="$COMPAT_DIR/grpc-java"
  mkdir -p "$GRPC_OUT/java-home"
  timeout -k 5 600 java -Xms128m -Xmx512m "${JAVA_COMMON[@]}" -Duser.home="$GRPC_OUT/java-home" \
    -cp "$j/target/classes:$(cat "$j/target/cp.txt")" compat.grpc.GrpcMain --endpoint "127.0.0.1:$GRPC_PROXY_PORT" \
    --run-id "$GRPC_RID" --only "$2" --state-dir "$GRPC_OUT/state" > "$1" 2>&1
}

# grpc_j07_dlq_watch <java pid>: once GRPC-J07's consumer saw both attempts, polls mqadmin queryMsgByKey on
# %DLQ%<group> until every sent message id is there (at most 50 s), writes grpc-J07-dlq.result (PASS|FAIL, detail)
# and grpc-J07-dlq.done (the consumer stays up until then: the proxy's third pop is what forwards to the DLQ)
grpc_j07_dlq_watch() {
  local st="$GRPC_OUT/state" dlq="%DLQ%GRPC_J07_${GRPC_RID}_g" end miss t0
  while [ ! -f "$st/grpc-J07-attempts.done" ]; do kill -0 "$1" 2>/dev/null || return 0; sleep 0.5; done
  t0=$SECONDS; end=$((SECONDS + 50))
  while :; do
    mqadmin queryMsgByKey -t "$dlq" -k "j07key$GRPC_RID" > "$GRPC_OUT/dlq.out" 2>&1
    miss=""
    while read -r mid; do [ -n "$mid" ] && ! grep -q "$mid" "$GRPC_OUT/dlq.out" && miss="$miss $mid"; done < "$st/grpc-J07-ids.txt"
    if [ -z "$miss" ]; then
      printf 'PASS\nall 3 message ids in %s (mqadmin queryMsgByKey) within %s s\n' "$dlq" $((SECONDS - t0)) > "$st/grpc-J07-dlq.result"; break
    fi
    if [ $SECONDS -ge $end ] || ! kill -0 "$1" 2>/dev/null; then
      printf 'FAIL\nnot in %s after %s s:%s (%s)\n' "$dlq" $((SECONDS - t0)) "$miss" \
        "$(grep -v '^SLF4J' "$GRPC_OUT/dlq.out" | head -c 300 | tr '\n' ' ')" > "$st/grpc-J07-dlq.result"; break
    fi
    sleep 1
  done
  : > "$st/grpc-J07-dlq.done"
}

suite_grpc() { # suite_grpc <broker addr>
  local A=$1 port=${1##*:} ids jids gids t0=$SECONDS
  GRPC_RID="${RID}${CUR_BROKER:0:1}"; GRPC_OUT="$RUN_DIR/grpc-$CUR_BROKER"; GRPC_J07=(); GRPC_J08=()
  mkdir -p "$GRPC_OUT/state"
  ids=$(filter_only $(grpc_ids) | paste -sd' ')
  [ -n "$ids" ] || return 0
  if [ ! -f "$COMPAT_DIR/grpc-java/target/classes/compat/grpc/GrpcMain.class" ] || [ ! -x "$COMPAT_DIR/grpc-go/bin/compat-grpc-go" ]; then
    fail_all "grpc suite not set up (compat-tests/setup.sh)" $ids; return 0
  fi
  # topics with their message.type, the FIFO and DLQ groups: real mqadmin commands, all in one JVM (MqadminBatch)
  local id ty cp
  {
    for id in J01 J02 J03 J04 J05 J06 J07 J08 J09 G01 G02 G03 G04 G05; do
      case $id in J02|G02) ty=FIFO ;; J03|J09|G03) ty=DELAY ;; J04|G04) ty=TRANSACTION ;; *) ty=NORMAL ;; esac
      printf 'topic-%s\tupdateTopic\t-n\t%s\t-b\t%s\t-t\tGRPC_%s_%s_t\t-r\t4\t-w\t4\t-a\t+message.type=%s\n' "$id" "$NS_ADDR" "$A" "$id" "$GRPC_RID" "$ty"
    done
    printf 'group-%s\tupdateSubGroup\t-n\t%s\t-b\t%s\t-g\tGRPC_%s_%s_g\t%s\t%s\n' \
      J02 "$NS_ADDR" "$A" J02 "$GRPC_RID" -o true  G02 "$NS_ADDR" "$A" G02 "$GRPC_RID" -o true  J07 "$NS_ADDR" "$A" J07 "$GRPC_RID" -r 1
  } > "$GRPC_OUT/mqadmin.in"
  cp=$(compat_cp) || { fail_all "compat classpath missing (compat-tests/setup.sh)" $ids; return 0; }
  mkdir -p "$RUN_DIR/mqadmin-home"
  # two JVMs of 8 commands each (an admin client start/stop costs about 1.5 s a command), the proxy starting meanwhile
  local half pids=()
  for half in 1 2; do
    awk -v h=$half '(NR <= 8) == (h == 1)' "$GRPC_OUT/mqadmin.in" \
      | timeout 120 java -Xms64m -Xmx256m -XX:TieredStopAtLevel=1 "${JAVA_COMMON[@]}" -Duser.home="$RUN_DIR/mqadmin-home" \
        -Drocketmq.home.dir="$HOME_DIR" -Drmq.logback.configurationFile=rmq.tools.logback.xml -Drocketmq.namesrv.addr="$NS_ADDR" \
        -cp "$cp" compat.MqadminBatch > "$GRPC_OUT/mqadmin-$half.out" 2>&1 &
    pids+=($!)
  done
  local s=$SECONDS proxy_ok=1
  grpc_start_proxy "$GRPC_OUT/proxy" false || proxy_ok=0
  local proxy_s=$((SECONDS - s))
  wait "${pids[@]}"
  cat "$GRPC_OUT/mqadmin-1.out" "$GRPC_OUT/mqadmin-2.out" > "$GRPC_OUT/mqadmin.out"
  awk -v d="$GRPC_OUT" '/^=== /{f=d "/" $2 ".out"; printf "" > f; next} f{print >> f}' "$GRPC_OUT/mqadmin.out"
  local bad=""
  for id in J01 J02 J03 J04 J05 J06 J07 J08 J09 G01 G02 G03 G04 G05; do
    grep -q "create topic to 127\.0\.0\.1:$port success" "$GRPC_OUT/topic-$id.out" || bad="$bad topic-$id"
  done
  for id in J02 G02 J07; do grep -q "create subscription group to 127\.0\.0\.1:$port success" "$GRPC_OUT/group-$id.out" || bad="$bad group-$id"; done
  if [ -n "$bad" ]; then
    fail_all "mqadmin setup failed:$bad ($(head -c 300 "$GRPC_OUT/${bad##* }.out" | tr '\n' ' '))" $ids
    stop "${GRPC_PROXY_PID:-}" KILL 5; return 0
  fi
  log "grpc: topics and groups created, proxy up in $proxy_s s, both in $((SECONDS - t0)) s"
  if [ $proxy_ok = 0 ]; then
    fail_all "rocketmq-proxy did not start: $(tail -n 5 "$GRPC_OUT/proxy/proxy.out" | tr '\n' ' ' | cut -c1-300)" $ids
    stop "${GRPC_PROXY_PID:-}" KILL 5; return 0
  fi
  jids=$(filter_only "${GRPC_JAVA_IDS[@]}" | paste -sd,)
  gids=$(filter_only "${GRPC_GO_IDS[@]}" | paste -sd,)
  # the Java and the Go scenarios run side by side (own topics and groups), each sequential in itself
  local gpid=""
  if [ -n "$gids" ]; then
    mkdir -p "$GRPC_OUT/go-home"
    HOME="$GRPC_OUT/go-home" env "rocketmq.client.logRoot=$GRPC_OUT/go-home/logs" timeout -k 5 600 \
      "$COMPAT_DIR/grpc-go/bin/compat-grpc-go" -endpoint "127.0.0.1:$GRPC_PROXY_PORT" -run-id "$GRPC_RID" -run "$gids" \
      > "$GRPC_OUT/go.out" 2>&1 &
    gpid=$!
  fi
  local jpid=""
  rm -f "$GRPC_OUT/state/grpc-J07-"*
  if [ -n "$jids" ]; then
    grpc_java "$GRPC_OUT/java.out" "$jids" &
    jpid=$!
    [[ ",$jids," == *",GRPC-J07,"* ]] && grpc_j07_dlq_watch "$jpid"
    wait "$jpid"
  fi
  [ -n "$gpid" ] && wait "$gpid"
  [ -n "$jids" ] && grpc_ingest "$GRPC_OUT/java.out" ${jids//,/ }
  [ -n "$gids" ] && grpc_ingest "$GRPC_OUT/go.out" ${gids//,/ }
  # J07: the Java side's detail plus the DLQ check grpc_j07_dlq_watch wrote
  if [ ${#GRPC_J07[@]} = 3 ]; then
    if [ "$(head -n 1 "$GRPC_OUT/state/grpc-J07-dlq.result" 2>/dev/null)" = PASS ]; then
      record GRPC-J07 "${GRPC_J07[0]}" PASS "${GRPC_J07[1]}" "${GRPC_J07[2]}; $(tail -n +2 "$GRPC_OUT/state/grpc-J07-dlq.result")"
    else
      record GRPC-J07 "${GRPC_J07[0]}" FAIL "${GRPC_J07[1]}" "${GRPC_J07[2]}; but $(tail -n +2 "$GRPC_OUT/state/grpc-J07-dlq.result" 2>/dev/null || echo 'no DLQ check ran')"
    fi
  fi
  stop "$GRPC_PROXY_PID" TERM 15; GRPC_PROXY_PID=""
  # J08: proxy #2 with enableBatchAck
  if [ -n "$(filter_only GRPC-J08)" ]; then
    wait_port_closed 127.0.0.1 "$GRPC_PROXY_PORT" 20
    if ! grpc_start_proxy "$GRPC_OUT/proxy-batchack" true; then
      record GRPC-J08 grpcjava-5.2.0 FAIL 0 "rocketmq-proxy (enableBatchAck) did not start: $(tail -n 5 "$GRPC_OUT/proxy-batchack/proxy.out" | tr '\n' ' ' | cut -c1-300)"
    else
      local b0 a0 b1 a1
      b0=$(grpc_rpc_count "$port" batch_ack_message); a0=$(grpc_rpc_count "$port" ack_message)
      grpc_java "$GRPC_OUT/java-batchack.out" GRPC-J08
      # the proxy sends its batched acks on its own schedule, which may end after the client returns:
      # the broker's counter is polled (10 s bound), then the plain-ack counter read once
      local t8=$((SECONDS + 10))
      while b1=$(grpc_rpc_count "$port" batch_ack_message); [ "$((b1 - b0))" -lt 1 ] && [ $SECONDS -lt $t8 ]; do
        sleep 0.5
      done
      a1=$(grpc_rpc_count "$port" ack_message)
      grpc_ingest "$GRPC_OUT/java-batchack.out" GRPC-J08
      if [ ${#GRPC_J08[@]} = 3 ]; then
        if [ "$((b1 - b0))" -ge 1 ] && [ "$a1" = "$a0" ]; then
          record GRPC-J08 "${GRPC_J08[0]}" PASS "${GRPC_J08[1]}" "${GRPC_J08[2]}; broker rpc counts: batch_ack_message +$((b1 - b0)), ack_message +0"
        else
          record GRPC-J08 "${GRPC_J08[0]}" FAIL "${GRPC_J08[1]}" "${GRPC_J08[2]}; but broker rpc counts: batch_ack_message $b0 -> $b1, ack_message $a0 -> $a1 (want +>=1, +0)"
        fi
      fi
    fi
    stop "${GRPC_PROXY_PID:-}" TERM 15; GRPC_PROXY_PID=""
  fi
  wait_port_closed 127.0.0.1 "$GRPC_PROXY_PORT" 20
  # what the proxy (and everything else since the broker started) asked the broker, with the broker's answers:
  # "<request_code> <response_code> <count>" from the rocketmq_rpc_latency counts (diagnostics; nothing asserted)
  curl -s --max-time 5 "http://127.0.0.1:$((port + 3))/metrics" | awk '/^rocketmq_rpc_latency[a-z_]*_count\{/ {
      rq = "-"; rs = "-"
      if (match($0, /request_code="[^"]*"/)) rq = substr($0, RSTART + 14, RLENGTH - 15)
      if (match($0, /response_code="[^"]*"/)) rs = substr($0, RSTART + 15, RLENGTH - 16)
      v = $0; sub(/^[^}]*\} */, "", v); split(v, a, " "); n[rq " " rs] += a[1]
    } END { for (k in n) printf "%s %.0f\n", k, n[k] }' | sort > "$GRPC_OUT/rpc-codes.txt"
  if awk -F'\t' -v b="$CUR_BROKER" '$1==b && $2=="grpc" && $5!="PASS"{f=1} END{exit !f}' "$RESULTS"; then
    local f
    for f in "$GRPC_OUT"/proxy*/logs/rocketmqlogs/proxy.log; do
      [ -f "$f" ] && { echo "----- last 60 lines of $f -----"; grep -v ' INFO ' "$f" | tail -n 60; } >&2
    done
  fi
}
