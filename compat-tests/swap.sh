# shellcheck shell=bash
# compat-tests/swap.sh — issue 5, the drop-in swap: a store directory moves between the real Java broker and rmqd
# with the same broker.conf, both ways, after SIGTERM and after SIGKILL, live under running clients, and the lock
# keeps a second broker off a directory in use. Sourced by run.sh (suite "swap"); uses lib.sh and run.sh's record.
#
# The java-broker column is the oracle: the same case with the Java broker on both sides (Java -> Java).
# The rmqd column is the swap itself. Every case uses one port ($JAVA_BROKER_PORT) for whichever broker runs.
#   SW-J2R       Java writes (topics, tags, keys, batches, 2 groups with committed offsets, CommitLog rolls),
#                SIGTERM, rmqd starts on the directory: every message identical in every stored field, topic and
#                group configs kept, keys and old msgIds found, consumers resume at their offsets.
#   SW-R2J       the same, rmqd first.
#   SW-J2R-KILL  SYNC_FLUSH; the first broker is killed with SIGKILL under 4 sending threads; the second broker
#   SW-R2J-KILL  recovers: SW-VERIFY again plus every acknowledged send present at its queue offset.
#   SW-LOCK-R    Java holds the directory; rmqd started on it fails with a clear message and changes no file.
#   SW-LOCK-J    rmqd holds the directory; the Java broker started on it fails ("Lock failed"); rmqd keeps working.
#   SW-LIVE      a Java producer + push consumer and a Go producer + push consumer run while the broker is
#                swapped Java -> rmqd -> Java; every acked message consumed; duplicates and outages reported.
#   POP-SW-J2R   issue 22, POP state across a swap (PopSwap.java): on the first broker a child JVM pops 40 messages
#   POP-SW-R2J   in POP mode (invisibleTime 45 s), acks the 20 even ones, holds the 20 odd ones and is SIGKILLed;
#                the broker gets SIGTERM; on the second broker a new consumer of the group gets each of the 20 back
#                once from %RETRY%<group>_<topic> (reconsumeTimes 1, 1ST_POP_TIME = the first pop), not before
#                popTime + invisibleTime, within a bound measured on Java -> Java; no acked one comes back; 5 new
#                messages are delivered. Java -> rmqd and rmqd -> Java.

SWAP_IDS=(SW-J2R SW-R2J SW-J2R-KILL SW-R2J-KILL SW-LOCK-R SW-LOCK-J SW-LIVE POP-SW-J2R POP-SW-R2J)
SWAP_SUB_IDS="SW-WRITE SW-VERIFY SW-LOAD SW-LOADVERIFY SW-PING SW-LIVE-JAVA SW-LIVE-GO POP-SW-WRITE POP-SW-VERIFY"

# swap_conf <dir> <flushDiskType> [port] : broker.conf for a swap case (same file for both brokers).
swap_conf() {
  local port=${3:-$JAVA_BROKER_PORT}
  render_broker_conf "$1/broker.conf" "$port" "$1/store"
  { echo "# swap cases: small CommitLog files so the workload rolls over several (blank records at each end)"
    echo "mappedFileSizeCommitLog=1048576"
    echo "flushDiskType=$2"
    echo "# Java's default levels: level 5 = 1 min, pending while the store changes hands"
    echo "messageDelayLevel=1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
    echo "# an open transaction must outlive the first broker's check-backs until the second one asks"
    echo "transactionCheckMax=100"; } >> "$1/broker.conf"
}

# subs_result <from_line> <ids...> : "PASS<TAB>details" when every sub-scenario recorded after from_line passed.
subs_result() {
  local from=$1; shift
  python3 - "$RESULTS" "$from" "$@" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]).readlines()[int(sys.argv[2]):] if l.strip()]
want = sys.argv[3:]
got = {r[2]: r for r in rows if r[2] in want}
bad = [w for w in want if w not in got or got[w][4] != "PASS"]
if bad:
    w = bad[0]
    print("FAIL\t%s: %s" % (w, got[w][6] if w in got else "never ran"))
else:
    print("PASS\t" + "; ".join("%s: %s" % (w, got[w][6]) for w in want))
PY
}

swap_stop_kind() { # stop whatever broker runs, wait for the port
  stop_broker "${1:-TERM}" 60
  wait_port_closed 127.0.0.1 "$JAVA_BROKER_PORT" 20
}

# swap_case <id> <first> <second> <TERM|KILL>
swap_case() {
  local id=$1 first=$2 second=$3 mode=$4 A="127.0.0.1:$JAVA_BROKER_PORT" t0=$SECONDS
  local dir="$RUN_DIR/swap/$id-$CUR_BROKER" rid="${RID}${id//-/}${CUR_BROKER:0:1}" flush=ASYNC_FLUSH subs="SW-WRITE SW-VERIFY"
  [ "$mode" = KILL ] && { flush=SYNC_FLUSH; subs="SW-WRITE SW-LOAD SW-VERIFY SW-LOADVERIFY"; }
  mkdir -p "$dir"; swap_conf "$dir" "$flush"
  local from; from=$(wc -l < "$RESULTS")
  log "swap $id ($CUR_BROKER column): $first -> $second after SIG$mode"
  if ! start_broker "$first" "$dir/broker.conf"; then
    record "$id" java FAIL 0 "$first broker did not start: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    swap_stop_kind KILL; return
  fi
  # after SIGTERM, a timer and a delay-level message are left pending across the swap too
  local pend=-Dswap.pending=false; [ "$mode" = TERM ] && pend=-Dswap.pending=true
  run_main 300 "$pend" -- --broker-addr "$A" --only SW-WRITE --run-id "$rid"
  local t_write=$SECONDS
  if [ "$mode" = KILL ] && [ "$(subs_result "$from" SW-WRITE | cut -f1)" = PASS ]; then
    local lout="$RUN_DIR/swap-load-$id-$CUR_BROKER.out" acked="$RUN_DIR/state/SW_$rid.acked" n=0
    rm -f "$acked"
    timeout -k 5 200 bash -c '. "$1/lib.sh"; shift; java_scenarios "$@"' _ "$COMPAT_DIR" -- --broker-addr "$A" \
      --broker-name "$BROKER_NAME" --state-dir "$RUN_DIR/state" --only SW-LOAD --run-id "$rid" > "$lout" 2>&1 &
    local lpid=$! end=$((SECONDS + 120))
    # kill in the middle of sending: >= 1500 acks, and >= 8 s after the groups committed (one offset flush)
    while [ $SECONDS -lt $end ]; do
      n=$(wc -l 2>/dev/null < "$acked" || echo 0)
      [ "${n:-0}" -ge 1500 ] && [ $((SECONDS - t_write)) -ge 8 ] && break
      kill -0 "$lpid" 2>/dev/null || break
      sleep 0.2
    done
    log "SIGKILL to the $first broker after $n acknowledged sends"
    stop_broker KILL 10
    wait "$lpid" 2>/dev/null
    ingest_json_lines "$lout" SW-LOAD java
  else
    swap_stop_kind TERM
  fi
  wait_port_closed 127.0.0.1 "$JAVA_BROKER_PORT" 20
  foreign_snapshot "$dir/store" > "$dir/foreign.before"
  echo "----- $second broker on the store $first left (SIG$mode) -----" >> "$BROKER_LOG"
  local t1=$SECONDS
  if ! start_broker "$second" "$dir/broker.conf"; then
    record "$id" java FAIL $(( (SECONDS - t0) * 1000 )) "$second broker did not start on the $first store: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    swap_stop_kind KILL; return
  fi
  local up=$((SECONDS - t1)) verify="SW-VERIFY"
  [ "$mode" = KILL ] && verify="SW-VERIFY,SW-LOADVERIFY"
  run_main 400 -- --broker-addr "$A" --only "$verify" --run-id "$rid"
  local res; res=$(subs_result "$from" $subs)
  [ "${res%%$'\t'*}" = PASS ] || broker_logs 60 >&2
  swap_stop_kind TERM
  # the files rmqd does not use (timer wheel and log, the other config/* files) leave rmqd as they came
  local foreign=""
  if [ "$second" = rmqd ] && [ "${res%%$'\t'*}" = PASS ]; then
    foreign_snapshot "$dir/store" > "$dir/foreign.after"
    local changed; changed=$(diff "$dir/foreign.before" "$dir/foreign.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')
    if [ -n "$changed" ]; then
      res="FAIL"$'\t'"rmqd changed files of the Java store it does not own: $changed"
    else
      foreign="; $(wc -l < "$dir/foreign.after") files rmqd does not use left byte-identical"
    fi
  fi
  record "$id" java "${res%%$'\t'*}" $(( (SECONDS - t0) * 1000 )) "$first -> $second (SIG$mode, second up in ${up}s): ${res#*$'\t'}$foreign"
}

# foreign_snapshot <store> : content hash of every file outside what rmqd reads and writes (CommitLog, queues,
# index, checkpoint/abort/lock, its four config files with their .bak, and its own timer progress rmqdTimer.json).
foreign_snapshot() {
  (cd "$1" && find . -type f ! -path './commitlog/*' ! -path './consumequeue/*' ! -path './index/*' \
    ! -name checkpoint ! -name abort ! -name lock ! -path './config/topics.json*' \
    ! -path './config/subscriptionGroup.json*' ! -path './config/consumerOffset.json*' \
    ! -path './config/delayOffset.json*' ! -path './config/rmqdTimer.json*' -print0 | sort -z | xargs -0 -r md5sum)
}

# store_snapshot <store> : every file with its size, and the content hash of everything but the files a running
# broker rewrites on its own (checkpoint, consumer offsets, the CommitLog/queue tails it appends to).
store_snapshot() {
  (cd "$1" && find . -type f -printf '%P %s\n' | sort && find . -type f \( -name 'topics.json' -o -name 'subscriptionGroup.json' \
    -o -name abort -o -name lock \) -print0 | sort -z | xargs -0 -r md5sum)
}

# lock_case <id> <holder> <intruder>
lock_case() {
  local id=$1 holder=$2 intruder=$3 A="127.0.0.1:$JAVA_BROKER_PORT" t0=$SECONDS
  local dir="$RUN_DIR/swap/$id-$CUR_BROKER" rid="${RID}${id//-/}${CUR_BROKER:0:1}" iport=$((JAVA_BROKER_PORT + 50))
  mkdir -p "$dir/intruder"; swap_conf "$dir" ASYNC_FLUSH
  # the same file with its own port and broker name (so a refused intruder cannot disturb the holder's route)
  # (and its own metrics port: the Java broker binds it before it tries the lock)
  sed -e "s/^listenPort=.*/listenPort=$iport/" -e "s/^brokerName=.*/brokerName=intruder/" \
    -e "s/^metricsPromExporterPort=.*/metricsPromExporterPort=$((iport + 3))/" "$dir/broker.conf" > "$dir/intruder/broker.conf"
  local from; from=$(wc -l < "$RESULTS")
  log "lock $id ($CUR_BROKER column): $holder holds the store, $intruder starts on it"
  if ! start_broker "$holder" "$dir/broker.conf"; then
    record "$id" java FAIL 0 "$holder broker did not start"; swap_stop_kind KILL; return
  fi
  run_main 120 -- --broker-addr "$A" --only SW-PING --run-id "${rid}a"
  sleep 6 # let the holder's own periodic writes (offsets, checkpoint) settle
  local before="$dir/before.txt" after="$dir/after.txt" out="$dir/intruder/out.txt" rc
  store_snapshot "$dir/store" > "$before"
  local cp jcmd=()
  if [ "$intruder" = java ]; then
    cp=$(compat_cp)
    jcmd=(java -Xms256m -Xmx512m "${JAVA_COMMON[@]}" -Duser.home="$dir/intruder" -Drocketmq.home.dir="$HOME_DIR"
      -Drmq.logback.configurationFile=rmq.broker.logback.xml -cp "$cp" org.apache.rocketmq.broker.BrokerStartup
      -c "$dir/intruder/broker.conf" -n "$NS_ADDR")
  else
    jcmd=(env HOME="$dir/intruder" "$RMQD_BIN" -c "$dir/intruder/broker.conf" -n "$NS_ADDR")
  fi
  local ti=$SECONDS
  timeout -k 5 90 "${jcmd[@]}" > "$out" 2>&1
  rc=$?
  local took=$((SECONDS - ti))
  store_snapshot "$dir/store" > "$after"
  local why=""
  if [ $rc = 0 ] || [ $rc = 124 ] || [ $rc = 137 ]; then
    why="the $intruder broker did not refuse the directory (exit $rc after ${took}s)"
  elif ! grep -Eq 'Lock failed|locked by' "$out"; then
    why="the $intruder broker exited $rc without naming the lock: $(tail -n 3 "$out" | tr '\n' ' ' | cut -c1-200)"
  elif port_open 127.0.0.1 "$iport"; then
    why="something still listens on the intruder port $iport"
  fi
  local changed; changed=$(diff "$before" "$after" | grep '^[<>]' | head -n 5 | tr '\n' ' ')
  if [ -z "$why" ] && [ -n "$changed" ] && [ "$intruder" = rmqd ]; then
    why="rmqd changed the store it refused: $changed"
  fi
  run_main 120 -- --broker-addr "$A" --only SW-PING --run-id "${rid}b"
  local res; res=$(subs_result "$from" SW-PING)
  local msg; msg=$(grep -E -m1 'Lock failed|locked by' "$out" | cut -c1-160)
  if [ -z "$why" ] && [ "${res%%$'\t'*}" != PASS ]; then why="the $holder broker stopped serving after the attempt: ${res#*$'\t'}"; fi
  if [ -n "$why" ]; then
    record "$id" java FAIL $(( (SECONDS - t0) * 1000 )) "$why"
  else
    record "$id" java PASS $(( (SECONDS - t0) * 1000 )) "$intruder refused in ${took}s (exit $rc): '$msg'; files it changed: ${changed:-none}; $holder still serves"
  fi
  swap_stop_kind TERM
}

# live_swap : Java and Go clients keep running while the broker is swapped <a> -> <b> -> <a>.
live_case() { # live_case <a> <b>
  local a=$1 b=$2 id=SW-LIVE A="127.0.0.1:$JAVA_BROKER_PORT" t0=$SECONDS
  local dir="$RUN_DIR/swap/$id-$CUR_BROKER" rid="${RID}SWLIVE${CUR_BROKER:0:1}"
  mkdir -p "$dir"; swap_conf "$dir" ASYNC_FLUSH
  local from; from=$(wc -l < "$RESULTS")
  log "live swap ($CUR_BROKER column): $a -> $b -> $a under running clients"
  if ! start_broker "$a" "$dir/broker.conf"; then record "$id" go+java FAIL 0 "$a broker did not start"; swap_stop_kind KILL; return; fi
  local stopf="$RUN_DIR/state/SW_$rid.stop" jout="$dir/java.out" gout="$dir/go.out" gobin="$COMPAT_DIR/go/bin/compat-go"
  mkdir -p "$RUN_DIR/state"; rm -f "$stopf"
  timeout -k 5 400 bash -c '. "$1/lib.sh"; shift; java_scenarios "$@"' _ "$COMPAT_DIR" -- --broker-addr "$A" \
    --broker-name "$BROKER_NAME" --state-dir "$RUN_DIR/state" --only SW-LIVE --run-id "$rid" > "$jout" 2>&1 &
  local jpid=$! gpid=""
  if [ -x "$gobin" ]; then
    timeout -k 5 400 "$gobin" -ns "$NS_ADDR" -broker "$A" -broker-name "$BROKER_NAME" -run SWLIVE -run-id "${rid}g" \
      -stop-file "$stopf" -log "$dir/go.log" > "$gout" 2>&1 &
    gpid=$!
  fi
  sleep 15
  local sw; for sw in "$b" "$a"; do
    log "live swap: stopping the $BROKER_KIND broker, starting $sw"
    swap_stop_kind TERM
    start_broker "$sw" "$dir/broker.conf" || { log "live swap: $sw did not start"; break; }
    sleep 20
  done
  touch "$stopf"
  wait "$jpid" 2>/dev/null
  [ -n "$gpid" ] && wait "$gpid" 2>/dev/null
  sed -i 's/"id":"SW-LIVE"/"id":"SW-LIVE-JAVA"/' "$jout"
  [ -f "$gout" ] && sed -i 's/"id":"SWLIVE"/"id":"SW-LIVE-GO"/' "$gout"
  ingest_json_lines "$jout" SW-LIVE-JAVA java
  if [ -x "$gobin" ]; then ingest_json_lines "$gout" SW-LIVE-GO go; else record SW-LIVE-GO go FAIL 0 "compat-go not built"; fi
  local res; res=$(subs_result "$from" SW-LIVE-JAVA SW-LIVE-GO)
  record "$id" go+java "${res%%$'\t'*}" $(( (SECONDS - t0) * 1000 )) "$a -> $b -> $a: ${res#*$'\t'}"
  swap_stop_kind TERM
}

# pop_swap_case <id> <first> <second> : unacknowledged POP messages move with the store (SIGTERM between).
# Java 5.3.3 oracle (Java -> Java): see PopSwap.java for the timings that size its bounds.
pop_swap_case() {
  local id=$1 first=$2 second=$3 A="127.0.0.1:$JAVA_BROKER_PORT" t0=$SECONDS
  local dir="$RUN_DIR/swap/$id-$CUR_BROKER" rid="${RID}${id//-/}${CUR_BROKER:0:1}"
  mkdir -p "$dir"; swap_conf "$dir" ASYNC_FLUSH
  local from; from=$(wc -l < "$RESULTS")
  log "pop swap $id ($CUR_BROKER column): $first -> $second after SIGTERM, 20 of 40 popped messages unacked"
  if ! start_broker "$first" "$dir/broker.conf"; then
    record "$id" java FAIL 0 "$first broker did not start: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    swap_stop_kind KILL; return
  fi
  run_main 300 -- --broker-addr "$A" --only POP-SW-WRITE --run-id "$rid"
  local res; res=$(subs_result "$from" POP-SW-WRITE)
  if [ "${res%%$'\t'*}" != PASS ]; then
    broker_logs 60 >&2
    swap_stop_kind TERM
    record "$id" java FAIL $(( (SECONDS - t0) * 1000 )) "on the $first broker, before the swap: ${res#*$'\t'}"
    return
  fi
  local ts=$SECONDS
  swap_stop_kind TERM
  local down=$((SECONDS - ts))
  echo "----- $second broker on the store $first left (SIGTERM, POP state pending) -----" >> "$BROKER_LOG"
  local t1=$SECONDS
  if ! start_broker "$second" "$dir/broker.conf"; then
    record "$id" java FAIL $(( (SECONDS - t0) * 1000 )) "$second broker did not start on the $first store: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    swap_stop_kind KILL; return
  fi
  local up=$((SECONDS - t1))
  run_main 360 -- --broker-addr "$A" --only POP-SW-VERIFY --run-id "$rid"
  res=$(subs_result "$from" POP-SW-WRITE POP-SW-VERIFY)
  [ "${res%%$'\t'*}" = PASS ] || broker_logs 80 >&2
  swap_stop_kind TERM
  local dump=""
  if [ "${res%%$'\t'*}" != PASS ] && python3 "$COMPAT_DIR/pop_store_dump.py" "$dir/store" "$dir/dump" > "$dir/dump.out" 2>&1; then
    dump=" (store decoded in $dir/dump)"
  fi
  record "$id" java "${res%%$'\t'*}" $(( (SECONDS - t0) * 1000 )) "$first -> $second (first stopped in ${down}s, second up in ${up}s): ${res#*$'\t'}$dump"
}

suite_swap() {
  CUR_SUITE=swap
  local s=$SECONDS
  local want; want=$(filter_only "${SWAP_IDS[@]}" | paste -sd, -)
  has() { [[ ",$want," == *",$1,"* ]]; }
  if [[ ",$BROKERS," == *",java,"* ]]; then
    CUR_BROKER=java
    # oracle: Java -> Java; one run answers for both directions
    if has SW-J2R || has SW-R2J; then swap_case SW-J2R java java TERM; copy_result SW-J2R SW-R2J; fi
    if has SW-J2R-KILL || has SW-R2J-KILL; then swap_case SW-J2R-KILL java java KILL; copy_result SW-J2R-KILL SW-R2J-KILL; fi
    if has SW-LOCK-R || has SW-LOCK-J; then lock_case SW-LOCK-R java java; copy_result SW-LOCK-R SW-LOCK-J; fi
    has SW-LIVE && live_case java java
    if has POP-SW-J2R || has POP-SW-R2J; then pop_swap_case POP-SW-J2R java java; copy_result POP-SW-J2R POP-SW-R2J; fi
  fi
  if [[ ",$BROKERS," == *",rmqd,"* ]]; then
    CUR_BROKER=rmqd
    has SW-J2R && swap_case SW-J2R java rmqd TERM
    has SW-R2J && swap_case SW-R2J rmqd java TERM
    has SW-J2R-KILL && swap_case SW-J2R-KILL java rmqd KILL
    has SW-R2J-KILL && swap_case SW-R2J-KILL rmqd java KILL
    has SW-LOCK-R && lock_case SW-LOCK-R java rmqd
    has SW-LOCK-J && lock_case SW-LOCK-J rmqd java
    has SW-LIVE && live_case java rmqd
    has POP-SW-J2R && pop_swap_case POP-SW-J2R java rmqd
    has POP-SW-R2J && pop_swap_case POP-SW-R2J rmqd java
  fi
  TIMES+=("swap $((SECONDS - s))s")
}

copy_result() { # copy_result <from-id> <to-id> : the oracle run answers for a second id (same broker column)
  local row; row=$(awk -F'\t' -v b="$CUR_BROKER" -v i="$1" '$1==b && $3==i' "$RESULTS" | tail -n 1)
  [ -n "$row" ] && printf '%s\n' "$row" | awk -F'\t' -v OFS='\t' -v i="$2" '{$3=i; print}' >> "$RESULTS"
}
