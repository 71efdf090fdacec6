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
#                messages are delivered. Java -> rmqd and rmqd -> Java. Each runs on the store and the swap of
#                SW-J2R / SW-R2J (swap_case with a pop id): one first-broker stop, the two verifications side by side.
# Fixed waits left: the pending messages' 60 s and popInvisibleTime 45 s (both sized from a Java stop + a Java start,
# see swap_case and PopSwap.IT) and the negative checks inside the Java scenarios; everything else polls for its
# condition (offsets flushed, clients progressing, the NameServer unregistration of a Java broker killed at the end).

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

# swap_stop_done <PASS|FAIL> : stop the broker a case ends on, once everything is checked. rmqd gets SIGTERM (it
# exits in well under a second, and swap_case compares the Java files it must leave alone after its clean exit).
# The Java broker's graceful stop takes 9-20 s (its shutdown hook joins its service threads one by one) and nothing
# reads the store after it, so when the case passed it gets SIGTERM only until its hook has unregistered it from the
# NameServer (the hook's first step, "unregisterBroker OK" in broker.log), then SIGKILL: the NameServer is left as
# after a clean stop, not waiting to notice a dead connection, when the next case's broker registers under the
# same name and address. After a failure it gets a full SIGTERM stop, so the store left for inspection (and
# pop_store_dump.py) is a clean one.
swap_stop_done() {
  local pid=${BROKER_PID:-} f="${BROKER_DIR:-}/logs/rocketmqlogs/broker.log" from=0
  if [ "${BROKER_KIND:-}" != java ] || [ "$1" != PASS ] || [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    swap_stop_kind TERM; return
  fi
  [ -f "$f" ] && from=$(grep -c '' "$f")
  kill -TERM "$pid" 2>/dev/null
  wait_log "$f" "unregisterBroker OK" 20 "$pid" "$from" 2> /dev/null \
    || log "the Java broker did not log its NameServer unregistration within 20 s"
  swap_stop_kind KILL
}

# offset_sum_on_disk <store> <topic@group> : the sum of the group's offsets in <store>/config/consumerOffset.json
offset_sum_on_disk() {
  python3 - "$1/config/consumerOffset.json" "$2" <<'PY'
import re, sys
try:
    text = open(sys.argv[1]).read()
except OSError:
    print(0); sys.exit(0)
m = re.search(r'"%s"\s*:\s*\{([^{}]*)\}' % re.escape(sys.argv[2]), text)
print(sum(int(o) for _, o in re.findall(r'"?(\d+)"?\s*:\s*(-?\d+)', m.group(1))) if m else 0)
PY
}

# offsets_on_disk <store> <offsets file> : true when <store>/config/consumerOffset.json holds every
# "group<TAB>topic<TAB>queue<TAB>offset" line of the file (the broker flushed the committed offsets; Java every
# flushConsumerOffsetInterval = 5 s). Both brokers write fastjson's form, map keys unquoted: {"t@g":{0:12,1:3}}.
offsets_on_disk() {
  python3 - "$1/config/consumerOffset.json" "$2" <<'PY'
import re, sys
try:
    text = open(sys.argv[1]).read()
    want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
except OSError:
    sys.exit(1)
tables = {}
for key, body in re.findall(r'"([^"]+@[^"]+)"\s*:\s*\{([^{}]*)\}', text):
    tables[key] = {int(q): int(o) for q, o in re.findall(r'"?(\d+)"?\s*:\s*(-?\d+)', body)}
ok = bool(want) and all(tables.get("%s@%s" % (t, g), {}).get(int(q)) == int(o) for g, t, q, o in want)
sys.exit(0 if ok else 1)
PY
}

# swap_case <id|-> <first> <second> <TERM|KILL> [pop-id] : one store moves from <first> to <second>.
# With a pop id (TERM only) the POP case rides on the same swap: POP-SW-WRITE runs on the first broker right after
# SW-WRITE (in the same JVM), and POP-SW-VERIFY on the second broker beside SW-VERIFY (two JVMs at once). The two
# workloads have their own topics and groups, and each one's waits (SW: the pending timer/delay messages due 60 s
# after SW-WRITE; POP: the popInvisibleTime of 45 s) then run down together instead of one after the other, with
# one first-broker stop (9-20 s for the Java broker) instead of two. SW-WRITE goes first so the POP pops stay the
# last thing before the stop (PopSwap.IT is sized from pop -> second broker up); the pending messages are then sent
# ~7 s earlier relative to the stop and are still due 25-30 s after the second broker is up on this box.
# id "-": the POP case alone (COMPAT_ONLY naming only a POP id).
swap_case() {
  local id=$1 first=$2 second=$3 mode=$4 pop=${5:--} A="127.0.0.1:$JAVA_BROKER_PORT" t0=$SECONDS
  local name=$id; [ "$id" = - ] && name=$pop
  local dir="$RUN_DIR/swap/$name-$CUR_BROKER" rid="${RID}${name//-/}${CUR_BROKER:0:1}" flush=ASYNC_FLUSH subs="SW-WRITE SW-VERIFY"
  [ "$mode" = KILL ] && { flush=SYNC_FLUSH; subs="SW-WRITE SW-LOAD SW-VERIFY SW-LOADVERIFY"; pop=-; }
  local writes="" both=""
  [ "$id" != - ] && writes=SW-WRITE
  [ "$pop" != - ] && writes="${writes:+$writes,}POP-SW-WRITE"
  [ "$id" != - ] && [ "$pop" != - ] && both=" + $pop"
  mkdir -p "$dir"; swap_conf "$dir" "$flush"
  local from; from=$(wc -l < "$RESULTS")
  log "swap $name$both ($CUR_BROKER column): $first -> $second after SIG$mode"
  if ! start_broker "$first" "$dir/broker.conf"; then
    local why; why="$first broker did not start: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    [ "$id" != - ] && record "$id" java FAIL 0 "$why"
    [ "$pop" != - ] && record "$pop" java FAIL 0 "$why"
    swap_stop_kind KILL; return
  fi
  # after SIGTERM, a timer and a delay-level message are left pending across the swap too
  local pend=-Dswap.pending=false; [ "$mode" = TERM ] && pend=-Dswap.pending=true
  run_main 540 "$pend" -- --broker-addr "$A" --only "$writes" --run-id "$rid"
  local t_write=$SECONDS down=0
  if [ "$mode" = KILL ] && [ "$(subs_result "$from" SW-WRITE | cut -f1)" = PASS ]; then
    local lout="$RUN_DIR/swap-load-$id-$CUR_BROKER.out" acked="$RUN_DIR/state/SW_$rid.acked" n=0
    rm -f "$acked"
    timeout -k 5 200 bash -c '. "$1/lib.sh"; shift; java_scenarios "$@"' _ "$COMPAT_DIR" -- --broker-addr "$A" \
      --broker-name "$BROKER_NAME" --state-dir "$RUN_DIR/state" --only SW-LOAD --run-id "$rid" > "$lout" 2>&1 &
    local lpid=$! end=$((SECONDS + 120)) flushed=0 tf=-
    # kill in the middle of sending: >= 1500 acks, and once the first broker has written the groups' committed
    # offsets (SW-WRITE saved them in SW_<rid>.offsets) to consumerOffset.json; SW-VERIFY compares them after the
    # crash. (This used to be a fixed ">= 8 s after SW-WRITE", one 5 s offset flush plus margin.)
    while [ $SECONDS -lt $end ]; do
      n=$(wc -l 2>/dev/null < "$acked" || echo 0)
      [ $flushed = 1 ] || { offsets_on_disk "$dir/store" "$RUN_DIR/state/SW_$rid.offsets" && flushed=1 && tf=$((SECONDS - t_write)); }
      [ "${n:-0}" -ge 1500 ] && [ $flushed = 1 ] && break
      kill -0 "$lpid" 2>/dev/null || break
      sleep 0.2
    done
    [ $flushed = 1 ] || log "the $first broker had not flushed the committed offsets after $((SECONDS - t_write)) s"
    log "SIGKILL to the $first broker after $n acknowledged sends, $((SECONDS - t_write)) s after SW-WRITE (offsets on disk after $tf s)"
    stop_broker KILL 10
    wait "$lpid" 2>/dev/null
    ingest_json_lines "$lout" SW-LOAD java
  else
    swap_stop_kind TERM
    down=$((SECONDS - t_write))
  fi
  wait_port_closed 127.0.0.1 "$JAVA_BROKER_PORT" 20
  foreign_snapshot "$dir/store" > "$dir/foreign.before"
  echo "----- $second broker on the store $first left (SIG$mode) -----" >> "$BROKER_LOG"
  local t1=$SECONDS
  if ! start_broker "$second" "$dir/broker.conf"; then
    local why; why="$second broker did not start on the $first store: $(tail -n 3 "$BROKER_LOG" | tr '\n' ' ' | cut -c1-200)"
    [ "$id" != - ] && record "$id" java FAIL $(( (SECONDS - t0) * 1000 )) "$why"
    [ "$pop" != - ] && record "$pop" java FAIL $(( (SECONDS - t0) * 1000 )) "$why"
    swap_stop_kind KILL; return
  fi
  local up=$((SECONDS - t1)) verify="SW-VERIFY" vpids=()
  [ "$mode" = KILL ] && verify="SW-VERIFY,SW-LOADVERIFY"
  if [ "$id" != - ]; then run_main 400 -- --broker-addr "$A" --only "$verify" --run-id "$rid" & vpids+=($!); fi
  if [ "$pop" != - ]; then run_main 360 -- --broker-addr "$A" --only POP-SW-VERIFY --run-id "$rid" & vpids+=($!); fi
  wait "${vpids[@]}"
  local res="PASS"$'\t' pres="PASS"$'\t'
  [ "$id" != - ] && res=$(subs_result "$from" $subs)
  [ "$pop" != - ] && pres=$(subs_result "$from" POP-SW-WRITE POP-SW-VERIFY)
  local all=PASS; [ "${res%%$'\t'*}" = PASS ] && [ "${pres%%$'\t'*}" = PASS ] || all=FAIL
  [ $all = PASS ] || broker_logs 80 >&2
  swap_stop_done $all
  # the files rmqd does not use (timer wheel and log, the other config/* files) leave rmqd as they came
  local foreign=""
  if [ "$id" != - ] && [ "$second" = rmqd ] && [ "${res%%$'\t'*}" = PASS ]; then
    foreign_snapshot "$dir/store" > "$dir/foreign.after"
    local changed; changed=$(diff "$dir/foreign.before" "$dir/foreign.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')
    if [ -n "$changed" ]; then
      res="FAIL"$'\t'"rmqd changed files of the Java store it does not own: $changed"
    else
      foreign="; $(wc -l < "$dir/foreign.after") files rmqd does not use left byte-identical"
    fi
  fi
  local ms=$(( (SECONDS - t0) * 1000 ))
  [ "$id" != - ] && record "$id" java "${res%%$'\t'*}" $ms "$first -> $second (SIG$mode, second up in ${up}s${both:+, one swap with $pop}): ${res#*$'\t'}$foreign"
  if [ "$pop" != - ]; then
    local dump=""
    if [ "${pres%%$'\t'*}" != PASS ] && python3 "$COMPAT_DIR/pop_store_dump.py" "$dir/store" "$dir/dump" > "$dir/dump.out" 2>&1; then
      dump=" (store decoded in $dir/dump)"
    fi
    record "$pop" java "${pres%%$'\t'*}" $ms "$first -> $second (first stopped in ${down}s, second up in ${up}s${both:+, one swap with $id}): ${pres#*$'\t'}$dump"
  fi
}

# foreign_snapshot <store> : content hash of every file outside what rmqd reads and writes (CommitLog, queues,
# index, checkpoint/abort/lock, its four config files with their .bak, Java's half-message counts transactionMetrics
# and POP order state consumerOrderInfo.json, which rmqd keeps as Java does (a Java broker killed before its first
# persist of them leaves none; rmqd then writes them, as a Java broker would), and its own timer progress rmqdTimer.json).
foreign_snapshot() {
  (cd "$1" && find . -type f ! -path './commitlog/*' ! -path './consumequeue/*' ! -path './index/*' \
    ! -name checkpoint ! -name abort ! -name lock ! -path './config/topics.json*' \
    ! -path './config/subscriptionGroup.json*' ! -path './config/consumerOffset.json*' \
    ! -path './config/delayOffset.json*' ! -path './config/transactionMetrics*' ! -path './config/rmqdTimer.json*' \
    ! -path './config/consumerOrderInfo.json*' \
    -print0 | sort -z | xargs -0 -r md5sum)
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
  # let the holder's own periodic writes settle: the offsets SW-PING's consumer committed (20 messages) reach
  # consumerOffset.json at the holder's next offset flush (Java: every 5 s). Polled, at most the 6 s this used to
  # sleep (one flush + 1 s).
  local settle=0
  while [ $settle -lt 30 ] && [ "$(offset_sum_on_disk "$dir/store" "SWPING_${rid}a@SWPINGG_${rid}a")" -lt 20 ]; do
    sleep 0.2; settle=$((settle + 1))
  done
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
  swap_stop_done "$([ -z "$why" ] && echo PASS || echo FAIL)"
}

# live_progress <file> : "<acked> <consumed>" as an SW-LIVE client last wrote it ("0 0" before its first write)
live_progress() {
  local a=0 c=0
  [ -s "$1" ] && read -r a c < "$1"
  echo "${a:-0} ${c:-0}"
}

# live_wait <n> <label> <pid>:<progress file>... : wait until every client has acknowledged n more sends and
# consumed n more distinct messages than when called (n = 100: 2-5 s of its traffic, one send every 20 ms), i.e.
# both directions work through the broker that is up now. At most 60 s; a client that falls short is logged, the
# case's verdict stays the final check (every acked message consumed). Replaces fixed sleeps (15 s, then 20 s
# after each swap).
live_wait() {
  local n=$1 label=$2 t0=$SECONDS end=$((SECONDS + 60)) spec a c a0 c0 ok i base=()
  shift 2
  for spec in "$@"; do base+=("$(live_progress "${spec#*:}")"); done
  while :; do
    ok=1; i=0
    for spec in "$@"; do
      read -r a c <<< "$(live_progress "${spec#*:}")"; read -r a0 c0 <<< "${base[$i]}"; i=$((i + 1))
      [ $((a - a0)) -ge "$n" ] && [ $((c - c0)) -ge "$n" ] && continue
      ok=0
      kill -0 "${spec%%:*}" 2>/dev/null || { log "live swap: $label: client pid ${spec%%:*} ended (progress $a $c)"; return 1; }
    done
    [ $ok = 1 ] && { log "live swap: $label: every client sent and consumed $n more in $((SECONDS - t0)) s"; return 0; }
    if [ $SECONDS -ge $end ]; then
      local now=""; for spec in "$@"; do now="$now [$(live_progress "${spec#*:}")]"; done
      log "live swap: $label: not every client sent and consumed $n more within 60 s (acked consumed per client at the start: ${base[*]}; now:$now)"
      return 1
    fi
    sleep 0.2
  done
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
  local jprog="$RUN_DIR/state/SW_$rid.progress" gprog="$dir/go.progress"
  mkdir -p "$RUN_DIR/state"; rm -f "$stopf" "$jprog" "$gprog"
  timeout -k 5 400 bash -c '. "$1/lib.sh"; shift; java_scenarios "$@"' _ "$COMPAT_DIR" -- --broker-addr "$A" \
    --broker-name "$BROKER_NAME" --state-dir "$RUN_DIR/state" --only SW-LIVE --run-id "$rid" > "$jout" 2>&1 &
  local jpid=$! gpid="" w=0
  # the Go client starts once the Java one writes its progress: compat.Main runs SW-LIVE only after the broker is
  # registered on the NameServer (the Java broker's own registration at boot is sometimes skipped and comes with
  # its first periodic one 10 s later), and a Go consumer started before that waits for its 30 s route refresh
  while [ ! -s "$jprog" ] && [ $w -lt 300 ] && kill -0 "$jpid" 2>/dev/null; do sleep 0.2; w=$((w + 1)); done
  if [ -x "$gobin" ]; then
    timeout -k 5 400 "$gobin" -ns "$NS_ADDR" -broker "$A" -broker-name "$BROKER_NAME" -run SWLIVE -run-id "${rid}g" \
      -stop-file "$stopf" -progress-file "$gprog" -log "$dir/go.log" > "$gout" 2>&1 &
    gpid=$!
  fi
  local clients=("$jpid:$jprog"); [ -n "$gpid" ] && clients+=("$gpid:$gprog")
  live_wait 100 "on $a" "${clients[@]}"
  local sw; for sw in "$b" "$a"; do
    log "live swap: stopping the $BROKER_KIND broker, starting $sw"
    swap_stop_kind TERM
    start_broker "$sw" "$dir/broker.conf" || { log "live swap: $sw did not start"; break; }
    live_wait 100 "on $sw after the swap" "${clients[@]}"
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
  swap_stop_done "${res%%$'\t'*}"
}

suite_swap() {
  CUR_SUITE=swap
  local s=$SECONDS
  local want; want=$(filter_only "${SWAP_IDS[@]}" | paste -sd, -)
  has() { [[ ",$want," == *",$1,"* ]]; }
  if [[ ",$BROKERS," == *",java,"* ]]; then
    CUR_BROKER=java
    # oracle: Java -> Java; one run answers for both directions
    local sw=- pop=-
    if has SW-J2R || has SW-R2J; then sw=SW-J2R; fi
    if has POP-SW-J2R || has POP-SW-R2J; then pop=POP-SW-J2R; fi
    if [ $sw != - ] || [ $pop != - ]; then
      swap_case $sw java java TERM $pop
      [ $sw != - ] && copy_result SW-J2R SW-R2J
      [ $pop != - ] && copy_result POP-SW-J2R POP-SW-R2J
    fi
    if has SW-J2R-KILL || has SW-R2J-KILL; then swap_case SW-J2R-KILL java java KILL; copy_result SW-J2R-KILL SW-R2J-KILL; fi
    if has SW-LOCK-R || has SW-LOCK-J; then lock_case SW-LOCK-R java java; copy_result SW-LOCK-R SW-LOCK-J; fi
    has SW-LIVE && live_case java java
  fi
  if [[ ",$BROKERS," == *",rmqd,"* ]]; then
    CUR_BROKER=rmqd
    pick() { if has "$1"; then echo "$1"; else echo -; fi; }
    if has SW-J2R || has POP-SW-J2R; then swap_case "$(pick SW-J2R)" java rmqd TERM "$(pick POP-SW-J2R)"; fi
    if has SW-R2J || has POP-SW-R2J; then swap_case "$(pick SW-R2J)" rmqd java TERM "$(pick POP-SW-R2J)"; fi
    has SW-J2R-KILL && swap_case SW-J2R-KILL java rmqd KILL
    has SW-R2J-KILL && swap_case SW-R2J-KILL rmqd java KILL
    has SW-LOCK-R && lock_case SW-LOCK-R java rmqd
    has SW-LOCK-J && lock_case SW-LOCK-J rmqd java
    has SW-LIVE && live_case java rmqd
  fi
  TIMES+=("swap $((SECONDS - s))s")
}

copy_result() { # copy_result <from-id> <to-id> : the oracle run answers for a second id (same broker column)
  local row; row=$(awk -F'\t' -v b="$CUR_BROKER" -v i="$1" '$1==b && $3==i' "$RESULTS" | tail -n 1)
  [ -n "$row" ] && printf '%s\n' "$row" | awk -F'\t' -v OFS='\t' -v i="$2" '{$3=i; print}' >> "$RESULTS"
}
