# shellcheck shell=bash
# compat-tests/suites/ops.sh — plug-in suite "ops" (issue #21 item 5): the operators' tools rocketmq-exporter and
# rocketmq-dashboard against the broker under test, on one scripted workload, Java oracle first, then rmqd.
#
# Workload (compat.Main OPSLOAD, one client JVM per broker): topic OPS_<run> (4 queues), producer group OPSP_<run>
# sends OPS_MESSAGES (200) sync messages (tag opstag, keys opskey_<run>_<i % 10>), push group OPSG_<run> consumes
# them all, offsets persisted, "OPS-READY"; then, while $RUN_DIR/ops/<broker>/load.on exists, 20 msg/s more.
#
# Exporter (built from ../shared/peers/rocketmq-exporter; own user.home, /metrics on a free loopback port, every
# collect task every 5 s instead of every minute, namesrv passed explicitly, default VIP channel):
#   OPS-EXP-QUIET     after the workload: producer_offset = 200, consumer_offset = 200, group_diff = 0,
#                     group_count = 1, producer_count = 1, brokeruntime msg put/get totals >= 200
#   OPS-EXP-LOAD      during the steady load: producer_tps, consumer_tps (topic/group), broker_tps, broker_qps,
#                     brokeruntime_put_tps10 > 0
#   OPS-EXP-FAMILIES  the metric families with samples (both scrapes): on the Java broker saved as the reference
#                     ($RUN_DIR/ops/java/families.txt); on rmqd every reference family must have samples (a missing
#                     one is a FAIL naming it)
# Dashboard (opt-in: OPS_DASHBOARD=1; built from ../shared/peers/rocketmq-dashboard,
# frontend with the machine's Node; port free, dataPath private): asserted through the REST endpoints its pages call,
# plus one headless Chromium screenshot per page in $RUN_DIR/ops/<broker>/shots/*.png:
#   OPS-DB-CLUSTER    cluster/list.query lists broker-a at the broker's address with putTps > 0 under load
#   OPS-DB-TOPIC      topic list, status (4 queues, offsets), route (this broker, 4 read queues), consumers
#   OPS-DB-GROUP      group list (1 consumer, TPS > 0 just after the load), progress (diffTotal 0 on 4 queues), connection + subscription
#   OPS-DB-MSG-TIME / -KEY / -ID   messages by topic and time (all 200), by key (20), by id (body, tag)
#   OPS-DB-RESET      resetOffset.do to before the workload with the consumer online: 4 queues rolled back to 0, the
#                     group catches up again (diffTotal 0)
#   OPS-DB-SEND       sendTopicMessage.do: SEND_OK, read back by id
# Setup (ops_setup, also via suites/setup-all.sh): copies the peers' trees into compat-tests/ops/target/ (shared/ is
# read-only), `mvn package` for the exporter; with OPS_DASHBOARD=1 also the dashboard (npm ci with package-lock's
# hosts rewritten to the configured npm registry, npm run build, mvn package). Idempotent: skipped when the jar exists.

PLUGIN_SUITES+=(ops)

: "${OPS_MESSAGES:=200}"
: "${OPS_PEERS:=${COMPAT_DIR:?}/../../shared/peers}"
: "${OPS_CHROMIUM:=chromium}"
OPS_DIR="${COMPAT_DIR:?}/ops"
OPS_EXPORTER_IDS=(OPS-EXP-QUIET OPS-EXP-LOAD OPS-EXP-FAMILIES)
OPS_DASHBOARD_IDS=(OPS-DB-CLUSTER OPS-DB-TOPIC OPS-DB-GROUP OPS-DB-MSG-TIME OPS-DB-MSG-KEY OPS-DB-MSG-ID OPS-DB-RESET OPS-DB-SEND)

ops_dashboard_on() { [ "${OPS_DASHBOARD:-0}" = 1 ]; }
ops_ids() {
  printf '%s\n' "${OPS_EXPORTER_IDS[@]}"
  ops_dashboard_on && printf '%s\n' "${OPS_DASHBOARD_IDS[@]}"
  return 0
}
ops_client_of() { case $1 in OPS-DB-*) echo dashboard ;; *) echo exporter ;; esac; }
ops_exporter_jar() { ls "$OPS_DIR"/target/exporter/target/rocketmq-exporter-*-exec.jar 2>/dev/null | head -1; }
ops_dashboard_jar() { ls "$OPS_DIR"/target/dashboard/target/rocketmq-dashboard-*.jar 2>/dev/null | grep -v -- '-sources' | head -1; }

# ops_copy_tree <peer name> : fresh writable copy of ../shared/peers/<name> in compat-tests/ops/target/<short>
ops_copy_tree() {
  local src="$OPS_PEERS/$1" dst="$OPS_DIR/target/$2"
  [ -d "$src" ] || { echo "ops setup: $src not found (OPS_PEERS)" >&2; return 1; }
  rm -rf "$dst"; mkdir -p "$OPS_DIR/target"
  cp -a "$src" "$dst" && chmod -R u+w "$dst"
}

ops_setup() {
  local t0=$SECONDS rc=0 log="$OPS_DIR/target/setup.log"
  mkdir -p "$OPS_DIR/target"
  command -v mvn > /dev/null && command -v java > /dev/null || { echo "ops setup: need mvn and a JDK 17" >&2; return 1; }
  if [ -z "$(ops_exporter_jar)" ]; then
    echo "ops setup: building rocketmq-exporter ..." >&2
    ops_copy_tree rocketmq-exporter exporter || return 1
    (cd "$OPS_DIR/target/exporter" && "${MVN:-mvn}" -B -q -Dstyle.color=never -DskipTests package) >> "$log" 2>&1 \
      || { echo "ops setup: exporter build failed (see $log)" >&2; rc=1; }
    echo "ops setup: exporter built in $((SECONDS - t0)) s" >&2
  fi
  if ops_dashboard_on && [ -z "$(ops_dashboard_jar)" ]; then
    local t1=$SECONDS d="$OPS_DIR/target/dashboard" reg
    command -v npm > /dev/null || { echo "ops setup: the dashboard needs node + npm" >&2; return 1; }
    echo "ops setup: building rocketmq-dashboard (frontend + jar) ..." >&2
    ops_copy_tree rocketmq-dashboard dashboard || return 1
    # package-lock resolves at a mirror this machine cannot reach: same tarballs (integrity unchanged) at the
    # configured registry
    reg=$(npm config get registry); reg=${reg%/}
    sed -i -E "s#\"resolved\": \"https?://[^/]+/#\"resolved\": \"$reg/#" "$d/frontend-new/package-lock.json"
    if (cd "$d/frontend-new" && npm ci --no-audit --no-fund --loglevel=error && CI=false GENERATE_SOURCEMAP=false npm run build) >> "$log" 2>&1 \
      && (cd "$d" && "${MVN:-mvn}" -B -q -Dstyle.color=never -DskipTests -Dskip.installnodenpm -Dskip.npm package) >> "$log" 2>&1; then
      echo "ops setup: dashboard built in $((SECONDS - t1)) s" >&2
    else
      echo "ops setup: dashboard build failed (see $log)" >&2; rc=1
    fi
    rm -rf "$d/frontend-new/node_modules"   # 300+ MB, only needed for the build
  fi
  if ops_dashboard_on && ! command -v "$OPS_CHROMIUM" > /dev/null; then
    # Debian's chromium (the screenshots); root on these machines
    echo "ops setup: installing chromium (apt) ..." >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >> "$log" 2>&1 \
      || { echo "ops setup: chromium not installed (see $log)" >&2; rc=1; }
  fi
  echo "ops setup: done ($((SECONDS - t0)) s)" >&2
  return $rc
}

ops_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ops_java <log> <home> <args...> : a tool JVM in the background (own user.home, loopback), pid in OPS_LAST_PID
ops_java() {
  local logf=$1 home=$2; shift 2
  mkdir -p "$home"
  env NAMESRV_ADDR="$NS_ADDR" java -Xms64m -Xmx384m "${JAVA_COMMON[@]}" -Duser.home="$home" -Djava.io.tmpdir="$home" \
    -Drocketmq.namesrv.addr="$NS_ADDR" "$@" > "$logf" 2>&1 &
  OPS_LAST_PID=$!
}

ops_run_py() { # ops_run_py <out file> <args...> : ops_check.py, its JSON lines appended to <out>
  local out=$1; shift
  python3 "$OPS_DIR/ops_check.py" "$@" >> "$out" 2>> "$out.err"
}

suite_ops() {
  local A=$1 b=$CUR_BROKER rid="${RID:-r$$}o${CUR_BROKER:0:1}"
  local dir="$RUN_DIR/ops/$b" T G P n=$OPS_MESSAGES
  T="OPS_$rid"; G="OPSG_$rid"; P="OPSP_$rid"
  CUR_SUITE=ops
  mkdir -p "$dir"
  local out="$dir/checks.out" ids; : > "$out"
  ids=$(ops_ids | paste -sd, -)
  if [ -z "$(ops_exporter_jar)" ] || { ops_dashboard_on && [ -z "$(ops_dashboard_jar)" ]; }; then
    ops_setup || log "ops: setup incomplete (see $OPS_DIR/target/setup.log)"
  fi
  local ejar djar=""; ejar=$(ops_exporter_jar); ops_dashboard_on && djar=$(ops_dashboard_jar)
  if [ -z "$ejar" ]; then fail_all "setup: rocketmq-exporter not built (ops_setup, $OPS_DIR/target/setup.log)" "${OPS_EXPORTER_IDS[@]}"; fi
  if ops_dashboard_on && [ -z "$djar" ]; then fail_all "setup: rocketmq-dashboard not built (ops_setup, $OPS_DIR/target/setup.log)" "${OPS_DASHBOARD_IDS[@]}"; fi
  [ -n "$ejar" ] || [ -n "$djar" ] || return 0

  # rocketmq-exporter reads the cluster name once, at start-up (MetricsCollectTask.init), and never again: with no
  # broker in the NameServer's cluster info then, every offset family stays empty. A broker just restarted by an
  # earlier suite can be missing for a while (the Java NameServer applies the old broker's UNREGISTER_BROKER
  # asynchronously, and the broker registers again only every 30 s), so wait until the NameServer lists it.
  local reg_try
  for reg_try in $(seq 1 20); do
    mqadmin clusterList | grep -Eq "$CLUSTER_NAME +$BROKER_NAME +0 +127\.0\.0\.1:${A##*:}" && break
    [ "$reg_try" = 20 ] && log "ops: the NameServer still lists no $BROKER_NAME at $A; starting the tools anyway"
    sleep 3
  done
  [ "$reg_try" -gt 1 ] && log "ops: $BROKER_NAME listed by the NameServer after $reg_try clusterList calls"
  # the tools and the workload start together (JVM start-up overlaps)
  local eport gport dport epid="" dpid="" wpid cron='0/5 * * * * ?'
  eport=$(ops_free_port); gport=$(ops_free_port)
  if [ -n "$ejar" ]; then
    ops_java "$dir/exporter.out" "$dir/exporter-home" -jar "$ejar" --server.address=127.0.0.1 --server.port="$eport" \
      --grpc.server.port="$gport" --rocketmq.config.namesrvAddr="$NS_ADDR" --rocketmq.config.rocketmqVersion=V4_9_4 \
      --task.collectTopicOffset.cron="$cron" --task.collectProducer.cron="$cron" --task.collectConsumerOffset.cron="$cron" \
      --task.collectBrokerStatsTopic.cron="$cron" --task.collectBrokerStats.cron="$cron" \
      --task.collectBrokerRuntimeStats.cron="$cron" --rocketmq.config.outOfTimeSeconds=30
    epid=$OPS_LAST_PID
  fi
  if [ -n "$djar" ]; then
    dport=$(ops_free_port)
    ops_java "$dir/dashboard.out" "$dir/dashboard-home" -jar "$djar" --server.address=127.0.0.1 --server.port="$dport" \
      --rocketmq.config.namesrvAddrs[0]="$NS_ADDR" --rocketmq.config.dataPath="$dir/dashboard-home/data"
    dpid=$OPS_LAST_PID
  fi
  rm -f "$dir/load.on"
  java_scenarios -Dcompat.holdSeconds=400 -Dcompat.opsMessages="$n" -Dcompat.opsLoadFile="$dir/load.on" -- \
    --broker-addr "$A" --broker-name "$BROKER_NAME" --only OPSLOAD --run-id "$rid" > "$dir/workload.out" 2>&1 &
  wpid=$!
  local ready=""
  if wait_log "$dir/workload.out" 'OPS-READY|"status":"FAIL"' 150 "$wpid" && ready=$(grep -m1 '^OPS-READY' "$dir/workload.out"); then
    log "ops: workload ready on $b: $ready"
  else
    local why; why="workload failed: $(grep -m1 '"id"' "$dir/workload.out" | cut -c1-400)"
    log "ops: $why"
    for i in ${ids//,/ }; do record "$i" "$(ops_client_of "$i")" FAIL 0 "$why (see $dir/workload.out)"; done
    ops_stop_all "$wpid" "$epid" "$dpid"; return
  fi
  local msgid begin; msgid=$(echo "$ready" | awk '{print $4}'); begin=$(echo "$ready" | awk '{print $5}')
  local common=(--topic "$T" --group "$G" --pgroup "$P" --n "$n")
  local dcommon=(--url "http://127.0.0.1:${dport:-0}" --client dashboard --shots "$dir/shots" --chromium "$OPS_CHROMIUM"
    --broker-name "$BROKER_NAME" --broker-addr "$A" --run-id "$rid" --msg-id "$msgid" --begin "$begin" "${common[@]}")
  # exporter, at rest: the workload's exact values (first collection after a JVM start can take ~60 s here)
  if [ -n "$ejar" ]; then
    wait_port 127.0.0.1 "$eport" 120 > /dev/null 2>&1
    ops_run_py "$out" exporter-quiet --url "http://127.0.0.1:$eport/metrics" --timeout 120 --out "$dir/metrics-quiet.txt" "${common[@]}"
  fi
  # steady load: TPS families (exporter), cluster page TPS (dashboard)
  touch "$dir/load.on"
  if [ -n "$ejar" ]; then
    ops_run_py "$out" exporter-load --url "http://127.0.0.1:$eport/metrics" --timeout 90 --out "$dir/metrics-load.txt" "${common[@]}"
  fi
  if [ -n "$djar" ]; then
    wait_port 127.0.0.1 "$dport" 120 > /dev/null 2>&1
    ops_run_py "$out" dashboard --step cluster --timeout 60 "${dcommon[@]}"
  fi
  rm -f "$dir/load.on"
  if [ -n "$ejar" ]; then
    local ref=""; [ "$b" = java ] || ref="$RUN_DIR/ops/java/families.txt"
    ops_run_py "$out" exporter-families --out "$dir/families.txt" --scrapes "$dir/metrics-quiet.txt" "$dir/metrics-load.txt" \
      ${ref:+--reference "$ref"}
  fi
  if [ -n "$djar" ]; then
    sleep 3 # the load's last messages consumed
    ops_run_py "$out" dashboard --step quiet --timeout 45 "${dcommon[@]}"
  fi
  ingest_json_lines "$out" "$ids" exporter
  ops_stop_all "$wpid" "$epid" "$dpid"
}

ops_stop_all() { # the workload subshell (and its JVM child), the tool JVMs
  local p k
  for p in "$@"; do
    [ -n "$p" ] || continue
    for k in $(ps -o pid= --ppid "$p" 2>/dev/null); do stop "$k" TERM 10; done
    stop "$p" TERM 15
  done
}
