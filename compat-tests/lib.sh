# shellcheck shell=bash
# compat-tests/lib.sh — helpers to run the REAL Java NameServer/Broker/mqadmin and rmqd side by side.
# Source it:  . compat-tests/lib.sh
# Everything binds to 127.0.0.1; every JVM gets its own -Duser.home under $RUN_DIR.

COMPAT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$COMPAT_DIR")
: "${RMQD_BIN:=$REPO_DIR/target/release/rmqd}"
: "${NS_ADDR:=127.0.0.1:9876}"
: "${JAVA_BROKER_PORT:=10911}"
: "${RMQD_BROKER_PORT:=20911}"
: "${BROKER_NAME:=broker-a}"
: "${CLUSTER_NAME:=CompatCluster}"
: "${RUN_DIR:=$COMPAT_DIR/.run/$(date +%Y%m%d-%H%M%S)-$$}"
export NAMESRV_ADDR="$NS_ADDR"
JAVA_DIR="$COMPAT_DIR/java"
HOME_DIR="$RUN_DIR/rocketmq-home"     # rocketmqHome only has to exist
mkdir -p "$RUN_DIR" "$HOME_DIR"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Classpath: every RocketMQ module (namesrv, broker, client, tools, example) + our compiled scenarios.
compat_cp() {
  local cpf="$JAVA_DIR/target/cp.txt"
  if [ ! -s "$cpf" ] || [ ! -d "$JAVA_DIR/target/classes/compat" ]; then
    log "classpath missing: run compat-tests/setup.sh first"; return 1
  fi
  printf '%s:%s' "$JAVA_DIR/target/classes" "$(cat "$cpf")"
}

# server_cp : classpath of the Java NameServer and broker. Default: compat_cp (5.3.3); a plug-in suite may point
# JAVA_SERVER_CP at another release's classpath in its <name>_before_run hook (the lite suite: 5.5.0).
server_cp() {
  if [ -n "${JAVA_SERVER_CP:-}" ]; then printf '%s' "$JAVA_SERVER_CP"; else compat_cp; fi
}

# render_conf <template> <out> KEY=VALUE... : replaces @KEY@ in the template.
render_conf() {
  local tmpl=$1 out=$2; shift 2
  local args=() kv
  for kv in "$@"; do args+=(-e "s#@${kv%%=*}@#${kv#*=}#g"); done
  sed "${args[@]}" "$tmpl" > "$out"
}

# render_broker_conf <out> <port> <store_dir> [brokerName]
render_broker_conf() {
  render_conf "$COMPAT_DIR/conf/broker.conf.tmpl" "$1" CLUSTER="$CLUSTER_NAME" BROKER_NAME="${4:-$BROKER_NAME}" \
    NS_ADDR="$NS_ADDR" BROKER_PORT="$2" HOME_DIR="$HOME_DIR" STORE_DIR="$3" PROM_PORT="$(($2 + 3))" \
    METRICS_EXPORTER="${BROKER_METRICS_EXPORTER:-PROM}"
  # BROKER_CONF_EXTRA: extra "key=value" lines for both brokers (set by a plug-in suite's <name>_before_run)
  [ -z "${BROKER_CONF_EXTRA:-}" ] || printf '%s\n' "$BROKER_CONF_EXTRA" >> "$1"
}

# render_ns_conf <out> <ns_dir>
render_ns_conf() {
  render_conf "$COMPAT_DIR/conf/namesrv.conf.tmpl" "$1" NS_PORT="${NS_ADDR##*:}" HOME_DIR="$HOME_DIR" NS_DIR="$2"
}

# port_open <host> <port>
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# wait_port <host> <port> <timeout_s> [pid] : fails fast when pid dies.
wait_port() {
  local host=$1 port=$2 t=${3:-30} pid=${4:-} end=$((SECONDS + ${3:-30}))
  while [ $SECONDS -lt $end ]; do
    port_open "$host" "$port" && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then log "pid $pid exited before $host:$port opened"; return 1; fi
    sleep 0.3
  done
  log "timeout (${t}s) waiting for $host:$port"; return 1
}

# wait_port_closed <host> <port> <timeout_s>
wait_port_closed() {
  local end=$((SECONDS + ${3:-30}))
  while [ $SECONDS -lt $end ]; do port_open "$1" "$2" || return 0; sleep 0.3; done
  return 1
}

# wait_log <file> <extended-regex> <timeout_s> [pid] [from_line] : fails fast when pid dies; only lines after
# from_line count (for appended logs).
wait_log() {
  local f=$1 re=$2 t=${3:-60} pid=${4:-} from=${5:-0} end=$((SECONDS + ${3:-60}))
  while [ $SECONDS -lt $end ]; do
    tail -n +"$((from + 1))" "$f" 2>/dev/null | grep -Eq -- "$re" && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then log "pid $pid exited before '$re' appeared in $f"; return 1; fi
    sleep 0.3
  done
  log "timeout (${t}s) waiting for '$re' in $f"; return 1
}

# stop <pid> [signal=TERM] [timeout_s=40] : signal, wait for exit, escalate to KILL.
stop() {
  local pid=$1 sig=${2:-TERM} t=${3:-40}
  [ -n "$pid" ] || return 0
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
  kill -s "$sig" "$pid" 2>/dev/null
  local end=$((SECONDS + t))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then log "pid $pid survived SIG$sig for ${t}s, sending KILL"; kill -9 "$pid" 2>/dev/null; fi
  wait "$pid" 2>/dev/null
  return 0
}

# stop_broker [signal=TERM] [timeout_s=60] : stops $BROKER_PID. The Java broker's JVM sometimes lingers after its
# shutdown hook has finished ("Shutdown hook over" in broker.log; store flushed, abort file removed), so for the
# Java broker a TERM is followed by KILL when the JVM has not exited 3 s after that line appears.
stop_broker() {
  local sig=${1:-TERM} t=${2:-60} pid=${BROKER_PID:-} f="${BROKER_DIR:-}/logs/rocketmqlogs/broker.log" n=0
  [ -n "$pid" ] || return 0
  if [ "$BROKER_KIND" = java ] && [ "$sig" = TERM ] && kill -0 "$pid" 2>/dev/null; then
    [ -f "$f" ] && n=$(grep -c "Shutdown hook over" "$f"); n=${n:-0}
    kill -TERM "$pid" 2>/dev/null
    local end=$((SECONDS + t))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
      local c; c=$(grep -c "Shutdown hook over" "$f" 2>/dev/null); c=${c:-0}
      if [ "$c" -gt "$n" ]; then
        local i; for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        break
      fi
      sleep 0.3
    done
    stop "$pid" KILL 10
  else
    stop "$pid" "$sig" "$t"
  fi
  BROKER_PID=""
}

JAVA_COMMON=(-XX:+UseSerialGC -XX:-OmitStackTraceInFastThrow -Drocketmq.client.logUseSlf4j=false)

# start_java_ns [dir] : real org.apache.rocketmq.namesrv.NamesrvStartup on $NS_ADDR. Sets NS_PID, NS_LOG.
start_java_ns() {
  local dir=${1:-$RUN_DIR/java-ns} cp; cp=$(server_cp) || return 1
  mkdir -p "$dir"; render_ns_conf "$dir/namesrv.conf" "$dir"
  if port_open 127.0.0.1 "${NS_ADDR##*:}"; then log "port ${NS_ADDR##*:} already in use"; return 1; fi
  java -Xms256m -Xmx256m -XX:MaxDirectMemorySize=256m "${JAVA_COMMON[@]}" -Duser.home="$dir" \
    -Drocketmq.home.dir="$HOME_DIR" -Drmq.logback.configurationFile=rmq.namesrv.logback.xml -cp "$cp" \
    org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" > "$dir/ns.out" 2>&1 &
  NS_PID=$!; NS_LOG="$dir/ns.out"; NS_KIND=java
  wait_log "$NS_LOG" "boot success" 60 "$NS_PID" && wait_port 127.0.0.1 "${NS_ADDR##*:}" 10 "$NS_PID"
}

# start_rmqd_ns [dir] : `rmqd namesrv -c namesrv.conf` (NameServer only). Sets NS_PID, NS_LOG.
start_rmqd_ns() {
  local dir=${1:-$RUN_DIR/rmqd-ns}
  mkdir -p "$dir"; render_ns_conf "$dir/namesrv.conf" "$dir"; NS_LOG="$dir/ns.out"; NS_PID=""; NS_KIND=rmqd
  if [ ! -x "$RMQD_BIN" ]; then log "rmqd binary not found at $RMQD_BIN"; echo "rmqd binary not found: $RMQD_BIN" > "$NS_LOG"; return 1; fi
  if port_open 127.0.0.1 "${NS_ADDR##*:}"; then log "port ${NS_ADDR##*:} already in use"; return 1; fi
  (cd "$dir" && HOME="$dir" exec "$RMQD_BIN" namesrv -c "$dir/namesrv.conf") > "$NS_LOG" 2>&1 &
  NS_PID=$!
  wait_port 127.0.0.1 "${NS_ADDR##*:}" 15 "$NS_PID"
}

# start_java_broker <conf> [dir] : real org.apache.rocketmq.broker.BrokerStartup. Sets BROKER_PID, BROKER_LOG, BROKER_DIR.
start_java_broker() {
  local conf=$1 dir=${2:-$(dirname "$1")} cp port; cp=$(server_cp) || return 1
  port=$(sed -n 's/^listenPort=//p' "$conf")
  mkdir -p "$dir"; BROKER_DIR=$dir; BROKER_LOG="$dir/broker.out"; BROKER_KIND=java
  if port_open 127.0.0.1 "$port"; then log "port $port already in use"; return 1; fi
  local from=0; [ -f "$BROKER_LOG" ] && from=$(wc -l < "$BROKER_LOG")
  java -Xms512m -Xmx1g -XX:MaxDirectMemorySize=1g "${JAVA_COMMON[@]}" -Duser.home="$dir" \
    -Drocketmq.home.dir="$HOME_DIR" -Drmq.logback.configurationFile=rmq.broker.logback.xml \
    -Drocketmq.broker.rebalance.lockMaxLiveTime=10000 -cp "$cp" \
    org.apache.rocketmq.broker.BrokerStartup -c "$conf" -n "$NS_ADDR" >> "$BROKER_LOG" 2>&1 &
  BROKER_PID=$!
  wait_log "$BROKER_LOG" "boot success" 120 "$BROKER_PID" "$from" && wait_port 127.0.0.1 "$port" 30 "$BROKER_PID"
}

# start_rmqd_broker <conf> [dir] : "$RMQD_BIN" -c broker.conf -n addr (like mqbroker). Fails fast.
start_rmqd_broker() {
  local conf=$1 dir=${2:-$(dirname "$1")} port
  port=$(sed -n 's/^listenPort=//p' "$conf")
  mkdir -p "$dir"; BROKER_DIR=$dir; BROKER_LOG="$dir/broker.out"; BROKER_PID=""; BROKER_KIND=rmqd
  if [ ! -x "$RMQD_BIN" ]; then log "rmqd binary not found at $RMQD_BIN"; echo "rmqd binary not found: $RMQD_BIN" >> "$BROKER_LOG"; return 1; fi
  if port_open 127.0.0.1 "$port"; then log "port $port already in use"; return 1; fi
  (cd "$dir" && HOME="$dir" exec "$RMQD_BIN" -c "$conf" -n "$NS_ADDR") >> "$BROKER_LOG" 2>&1 &
  BROKER_PID=$!
  wait_port 127.0.0.1 "$port" "${RMQD_START_TIMEOUT:-20}" "$BROKER_PID"
}

# start_broker <java|rmqd> <conf> [dir]
start_broker() { local k=$1; shift; "start_${k}_broker" "$@"; }

# broker_logs [lines] : last lines of the current broker's stdout and main log file.
broker_logs() {
  local n=${1:-100} f
  for f in "$BROKER_LOG" "$BROKER_DIR/logs/rocketmqlogs/broker.log"; do
    [ -f "$f" ] || continue
    echo "----- last $n lines of $f -----"; tail -n "$n" "$f"
  done
}

# mqadmin <subcommand> [args...] : one short JVM running the real MQAdminStartup; `-n $NS_ADDR` is appended.
# MQAdminStartup exits 0 even on failure: callers must assert on the OUTPUT (see mqadmin_expect).
mqadmin() {
  local cp sub=$1; shift; cp=$(compat_cp) || return 1
  mkdir -p "$RUN_DIR/mqadmin-home"
  timeout "${MQADMIN_TIMEOUT:-60}" java -Xms64m -Xmx256m -XX:TieredStopAtLevel=1 "${JAVA_COMMON[@]}" \
    -Duser.home="$RUN_DIR/mqadmin-home" -Drocketmq.home.dir="$HOME_DIR" \
    -Drmq.logback.configurationFile=rmq.tools.logback.xml -Drocketmq.namesrv.addr="$NS_ADDR" -cp "$cp" \
    org.apache.rocketmq.tools.command.MQAdminStartup "$sub" -n "$NS_ADDR" "$@" 2>&1
}

# java_scenarios [jvm-opts...] -- [Main args...] : runs compat.Main (JSON lines on stdout).
java_scenarios() {
  local cp jopts=() ; cp=$(compat_cp) || return 1
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do jopts+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  mkdir -p "$RUN_DIR/client-home"
  java -Xms128m -Xmx512m "${JAVA_COMMON[@]}" -Duser.home="$RUN_DIR/client-home" -Drocketmq.home.dir="$HOME_DIR" \
    -Drmq.logback.configurationFile=rmq.client.logback.xml \
    -Drocketmq.client.localOffsetStoreDir="$RUN_DIR/client-home/.rocketmq_offsets" \
    -Drocketmq.namesrv.addr="$NS_ADDR" "${jopts[@]}" -cp "$cp" compat.Main --ns "$NS_ADDR" "$@"
}

# disk_check <dir> : warn/fail when the disk is nearly full (store marks itself unwritable above 90%).
disk_check() {
  local pct; pct=$(df -P "$1" | awk 'NR==2{gsub("%","",$5); print $5}')
  if [ "${pct:-0}" -ge 85 ]; then log "disk ${pct}% full at $1: the broker store would refuse writes"; return 1; fi
  [ "${pct:-0}" -ge 80 ] && log "warning: disk ${pct}% full at $1"
  return 0
}
