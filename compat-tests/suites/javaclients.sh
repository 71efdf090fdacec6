# shellcheck shell=bash
# compat-tests/suites/javaclients.sh — plug-in suite "javaclients": the Java client matrix (issue #20 item 3).
#
# One scenario program (compat-tests/javaclients/src/main/java/jc/ClientMatrix.java), compiled against the OLDEST
# client line (rocketmq-client 4.4.0) with API the newer lines keep binary-compatible, run once per client line with
# THAT line's client jar and its own transitive dependencies (netty, fastjson, ...) on the classpath, every client at
# its defaults (4.4.0: VIP channel = listenPort-2). The lite pull consumer (4.6+) is jc.LitePull, compiled against the
# oldest line that has DefaultLitePullConsumer and put on the classpath only for lines that have it.
#
# Scenarios per line (ids <prefix>-<scenario>, prefix JC<major><minor>: JC44, JC49, JC52, JC53, JC55; client column
# java-<version>):
#   SYNC     40 sync sends; read back (DefaultMQPullConsumer, every queue): exactly once, body/tags/keys/unicode prop,
#            msgId = UNIQ_KEY, offsetMsgId, queue and queue offset as acked
#   ASYNC    60 async sends, every callback SEND_OK, read back exactly once
#   ONEWAY   40 oneway sends, read back exactly once
#   BATCH    3 batches of 16: 16 msgIds each, one queue, consecutive offsets from the acked one, exactly once
#   PUSH     push consumer (concurrently): 30 sent before start, 30 after; exactly once; detail first=NNNms
#            (first delivery after consumer.start())
#   ORDERLY  push consumer (orderly): 4 orders x 15 via a MessageQueueSelector; per order in sequence, one queue,
#            exactly once; detail first=NNNms
#   PULL     DefaultMQPullConsumer: read all exactly once, nothing past the end, pullBlockIfNotFound at the end of a
#            queue wakes on a new send (long polling), offsets committed and read back by a new instance
#   LITEPULL DefaultLitePullConsumer (4.6+ only; other lines: "n/a" in the matrix, no record): subscribe/poll all,
#            commit(persist) + committed() == sent, a new instance resumes with only the later messages
#   TXN      TransactionMQProducer: commit, rollback, unknown->check-back commit, unknown->check-back rollback (2 each):
#            direct commits visible exactly once, check-back commits at least once (the Java broker may commit a
#            checked-back message twice; copies are reported), rolled back never, check-back called for both unknown kinds
# Matrix mode (COMPAT_MATRIX=full, set by COMPAT_SUITES=matrix) also runs mqadmin from rocketmq-tools 4.9.8 through
# the mqadmin suite's checks (see jc_mqadmin_checks), ids MQA49-M01 ...
# COMPAT_ONLY restricts this suite only when it names one of its ids (e.g. COMPAT_ONLY=JC44-TXN).
# More: compat-tests/javaclients/README.md
#
# Default (CI): only the 4.4.0 line (JAVACLIENTS_CI_VERSIONS). Full: JAVACLIENTS_VERSIONS (all five lines).
# Output: records via run.sh (source of truth), plus $RUN_DIR/javaclients-matrix.tsv
#   (broker, client, version, scenario, status, ms, first_ms, detail; n/a cells included) and a matrix on stderr.
# Setup: javaclients_setup (also run by compat-tests/suites/setup-all.sh; COMPAT_MATRIX=full resolves every line)
#   resolves each line with compat-tests/javaclients/pom.xml into target/cp-<artifact>-<version>.txt and compiles with
#   javac; idempotent and < 1 s when up to date.

PLUGIN_SUITES+=(javaclients)

: "${JAVACLIENTS_VERSIONS:=4.4.0 4.9.8 5.2.0 5.3.3 5.5.0}"
: "${JAVACLIENTS_CI_VERSIONS:=4.4.0}"
: "${JAVACLIENTS_MQADMIN_VERSION:=4.9.8}"
JC_SCENARIOS=(SYNC ASYNC ONEWAY BATCH PUSH ORDERLY PULL LITEPULL TXN)
# hard cap per client line JVM (the scenarios have their own timeouts, 60-90 s each)
: "${JAVACLIENTS_LINE_TIMEOUT:=720}"
# Java 17 + the old Netty/fastjson of the 4.x lines
JC_OPENS=(--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED)

jc_dir() { echo "${COMPAT_DIR:?}/javaclients"; }
jc_full() { [ "${COMPAT_MATRIX:-}" = full ]; }
jc_versions() { if jc_full; then echo "$JAVACLIENTS_VERSIONS"; else echo "$JAVACLIENTS_CI_VERSIONS"; fi; }
jc_prefix() { local a=${1%%.*} r=${1#*.}; echo "JC${a}${r%%.*}"; }          # 4.4.0 -> JC44, 5.3.3 -> JC53
jc_mqa_prefix() { jc_prefix "$1" | sed 's/^JC/MQA/'; }                       # 4.9.8 -> MQA49
jc_has_lite() { [ "$(printf '%s\n%s\n' 4.6.0 "$1" | sort -V | head -1)" = 4.6.0 ]; }
jc_oldest() { tr ' ' '\n' | sed '/^$/d' | sort -V | head -1; }
jc_cpfile() { echo "$(jc_dir)/target/cp-$1-$2.txt"; }                        # jc_cpfile rocketmq-client 4.4.0
jc_scenarios_of() { # jc_scenarios_of <version> : the scenarios that line has
  local s
  for s in "${JC_SCENARIOS[@]}"; do
    [ "$s" = LITEPULL ] && ! jc_has_lite "$1" && continue
    echo "$s"
  done
}
# COMPAT_ONLY restricts this suite only when it names one of its ids (JCxx-*, MQAxx-*), e.g. COMPAT_ONLY=JC44-TXN;
# (the MQAxx checks run all or nothing: they depend on each other)
jc_only_applies() { [[ ",${COMPAT_ONLY:-}," =~ ,(JC|MQA)[0-9]+- ]]; }
jc_mqa_ids() {
  local m ids=(M01 M02 M03 M04 M05 M06 M07 M08 M09 M10 M11 M11b M12 M13 M14 M15 M16 M17 M18 M19 M20 M21 M22 M23 M24)
  for m in "${ids[@]}"; do
    echo "$(jc_mqa_prefix "$JAVACLIENTS_MQADMIN_VERSION")-$m"
  done
}

javaclients_ids() {
  local v s
  for v in $(jc_versions); do
    for s in $(jc_scenarios_of "$v"); do echo "$(jc_prefix "$v")-$s"; done
  done
  jc_full && jc_mqa_ids
  return 0
}

# jc_resolve <artifact> <version> : classpath file via Maven (skipped when present and every jar exists)
jc_resolve() {
  local art=$1 v=$2 d cpf j ok=1; d=$(jc_dir); cpf=$(jc_cpfile "$art" "$v")
  if [ -s "$cpf" ]; then
    for j in $(tr ':' ' ' < "$cpf"); do [ -f "$j" ] || { ok=0; break; }; done
    [ $ok = 1 ] && return 0
  fi
  rm -f "$cpf"
  echo "javaclients setup: resolving $art $v ..." >&2
  if ! "${MVN:-mvn}" -B -q -Dstyle.color=never -f "$d/pom.xml" -Djc.artifact="$art" -Djc.version="$v" \
      -Djc.cpfile="$cpf" generate-sources >> "$d/target/setup.log" 2>&1 || [ ! -s "$cpf" ]; then
    echo "javaclients setup: could not resolve org.apache.rocketmq:$art:$v (see $d/target/setup.log)" >&2
    rm -f "$cpf"; return 1
  fi
}

# jc_compile <out dir> <classpath> <sources...> : javac unless the fingerprint of sources + classpath is unchanged
jc_compile() {
  local out=$1 cp=$2; shift 2
  local fp; fp=$( (cat "$@"; echo "$cp") | sha256sum | cut -c1-16)
  [ -f "$out/.fingerprint" ] && [ "$(cat "$out/.fingerprint")" = "$fp" ] && return 0
  rm -rf "$out"; mkdir -p "$out"
  echo "javaclients setup: compiling $(basename "$out") ..." >&2
  javac -nowarn --release 17 -encoding UTF-8 -cp "$cp" -d "$out" "$@" >> "$(jc_dir)/target/setup.log" 2>&1 \
    || { echo "javaclients setup: javac failed (see $(jc_dir)/target/setup.log)" >&2; rm -rf "$out"; return 1; }
  echo "$fp" > "$out/.fingerprint"
}

javaclients_setup() {
  local d t0=$SECONDS v rc=0 oldest lite=""; d=$(jc_dir)
  mkdir -p "$d/target"
  command -v java > /dev/null && command -v javac > /dev/null || { echo "javaclients setup: need a JDK 17 (java, javac)" >&2; return 1; }
  for v in $(jc_versions); do jc_resolve rocketmq-client "$v" || rc=1; done
  jc_full && { jc_resolve rocketmq-tools "$JAVACLIENTS_MQADMIN_VERSION" || rc=1; }
  # main program against the oldest line; lite against the oldest line that has DefaultLitePullConsumer
  oldest=$(echo "$JAVACLIENTS_CI_VERSIONS $(jc_versions)" | jc_oldest)
  jc_resolve rocketmq-client "$oldest" || return 1
  jc_compile "$d/target/classes" "$(cat "$(jc_cpfile rocketmq-client "$oldest")")" "$d"/src/main/java/jc/*.java || return 1
  for v in $(jc_versions | tr ' ' '\n' | sort -V); do jc_has_lite "$v" && { lite=$v; break; }; done
  if [ -n "$lite" ] && [ -s "$(jc_cpfile rocketmq-client "$lite")" ]; then
    jc_compile "$d/target/classes-lite" "$d/target/classes:$(cat "$(jc_cpfile rocketmq-client "$lite")")" "$d"/src/lite/java/jc/*.java || rc=1
  fi
  echo "javaclients setup: done (lines: $(jc_versions); $((SECONDS - t0)) s)" >&2
  return $rc
}

# jc_java <timeout s> <home> <classpath> <main> [args...] : one client JVM (own user.home, namesrv by property and
# env, never an outside host), hard timeout
jc_java() {
  local tmo=$1 home=$2 cp=$3; shift 3
  mkdir -p "$home"
  timeout -k 5 "$tmo" env NAMESRV_ADDR="$NS_ADDR" java -Xms64m -Xmx384m "${JAVA_COMMON[@]}" "${JC_OPENS[@]}" \
    -Duser.home="$home" -Drocketmq.home.dir="$home" -Drmq.logback.configurationFile=rmq.client.logback.xml \
    -Drocketmq.client.localOffsetStoreDir="$home/.rocketmq_offsets" -Drocketmq.namesrv.addr="$NS_ADDR" \
    -cp "$cp" "$@"
}

# jc_run_line <broker addr> <version>
jc_run_line() {
  local A=$1 v=$2 d pre client ids cpf cp out home; d=$(jc_dir)
  pre=$(jc_prefix "$v"); client="java-$v"
  ids=$(jc_scenarios_of "$v" | sed "s/^/$pre-/" | paste -sd, -)
  jc_only_applies && ids=$(echo "${ids//,/ }" | tr ' ' '\n' | while read -r i; do
    [[ ",$COMPAT_ONLY," == *",$i,"* ]] && echo "$i"; done | paste -sd, -)
  [ -n "$ids" ] || return 0
  cpf=$(jc_cpfile rocketmq-client "$v")
  if [ ! -s "$cpf" ] || [ ! -f "$d/target/classes/jc/ClientMatrix.class" ]; then
    local i; for i in ${ids//,/ }; do record "$i" "$client" FAIL 0 "setup: rocketmq-client $v not resolved or scenarios not compiled (javaclients_setup, $d/target/setup.log)"; done
    return
  fi
  cp="$d/target/classes"
  if jc_has_lite "$v"; then cp="$cp:$d/target/classes-lite"; fi
  cp="$cp:$(cat "$cpf")"
  home="$RUN_DIR/javaclients/$CUR_BROKER-$v"; out="$RUN_DIR/javaclients/$CUR_BROKER-$v.out"
  mkdir -p "$home"
  log "javaclients: $client on $CUR_BROKER ($A): ${ids//,/ }"
  jc_java "$JAVACLIENTS_LINE_TIMEOUT" "$home" "$cp" jc.ClientMatrix --ns "$NS_ADDR" --broker-addr "$A" --broker-name "$BROKER_NAME" --prefix "$pre" \
    --client "$client" --expect-version "$v" --run-id "${RID:-r$$}${CUR_BROKER:0:1}" \
    --only "$(echo "${ids//,/ }" | tr ' ' '\n' | sed "s/^$pre-//" | paste -sd, -)" > "$out" 2>&1
  ingest_json_lines "$out" "$ids" "$client"
}

# mqadmin from rocketmq-tools <JAVACLIENTS_MQADMIN_VERSION> (4.9.8): the checks of the mqadmin suite
# (compat-tests/mqadmin.sh: mqa_check, the HOLD helper JVM, same expectations) run with that version's MQAdminStartup;
# ids MQA49-<mqadmin id>, client mqadmin-<version>. Two differences of the 4.9.x tool:
#   M01  plain `clusterList` throws a NullPointerException against the Java 5.x broker too (the 4.9.x tool reads the
#        runtime key getTransferedTps, which 5.x renamed getTransferredTps), so M01 is `clusterList -m` (cluster, broker
#        and the today/yesterday counters); M02 brokerStatus -b <addr> still pins the address.
#   M18  4.9.x queryMsgById has no -t option (usage error with it): `queryMsgById -i <offset msgId>`.
jc_mqadmin_checks() { # jc_mqadmin_checks <broker addr> <run id>
  local A=$1 rid=$2 port=${1##*:}
  local T="MQA_$rid" G="MQAG_$rid" P="MQAP_$rid" XT="MQAX_$rid" XG="MQAXG_$rid"
  MQA_OUT="$RUN_DIR/javaclients/mqadmin-$rid"; mkdir -p "$MQA_OUT"
  java_scenarios -Dcompat.holdSeconds=240 -- --broker-addr "$A" --broker-name "$BROKER_NAME" --only HOLD --run-id "$rid" \
    > "$MQA_OUT/hold.out" 2>&1 &
  local hold=$!
  if ! wait_log "$MQA_OUT/hold.out" 'HOLD-READY|"status":"FAIL"' 90 "$hold" || grep -q '"status":"FAIL"' "$MQA_OUT/hold.out"; then
    log "mqadmin helper (producer/consumer) did not come up: $(grep -m1 '"id"' "$MQA_OUT/hold.out" | cut -c1-300)"
  fi
  MQA_TRIES=10 mqa_check M01 "^$CLUSTER_NAME +$BROKER_NAME +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+" clusterList -m
  mqa_check M02 'brokerVersionDesc +:' brokerStatus -b "$A"
  MQA_TRIES=5 mqa_check M03 "^$T\$" topicList
  mqa_check M04 "\"127\.0\.0\.1:$port\"" topicRoute -t "$T"
  mqa_check M05 "^$BROKER_NAME +0 +[0-9]+ +[0-9]+" topicStatus -t "$T"
  mqa_check M06 "create topic to 127\.0\.0\.1:$port success" updateTopic -b "$A" -t "$XT" -r 2 -w 2
  mqa_check M07 "delete topic \[$XT\] from cluster \[$CLUSTER_NAME\] success" deleteTopic -c "$CLUSTER_NAME" -t "$XT"
  mqa_check M08 "create subscription group to 127\.0\.0\.1:$port success" updateSubGroup -b "$A" -g "$XG"
  mqa_check M09 "delete subscription group \[$XG\] from broker \[127\.0\.0\.1:$port\] success" deleteSubGroup -b "$A" -g "$XG"
  mqa_check M10 "^brokerName *= *$BROKER_NAME" getBrokerConfig -b "$A"
  if mqa_check M11 "update broker config success" updateBrokerConfig -b "$A" -k flushIntervalCommitLog -v 700; then
    mqa_check M11b "^flushIntervalCommitLog *= *700" getBrokerConfig -b "$A"
  fi
  mqa_check M12 "^$T +$BROKER_NAME +0 +[0-9]+ +[0-9]+ +0 " consumerProgress -g "$G"
  mqa_check M13 "@hold_$rid +127\.0\.0\.1:[0-9]+ +JAVA" consumerConnection -g "$G"
  mqa_check M14 "@p_${P}_[0-9]+ +127\.0\.0\.1:[0-9]+ +JAVA" producerConnection -g "$P" -t "$T"
  local id="" off=""
  if mqa_check M15 "SEND_OK" sendMessage -t "$T" -p "mqadmin body $rid" -k "mqakey_$rid" -c mqatag; then
    id=$(printf '%s\n' "$MQA_LAST" | awk '/SEND_OK/{print $NF}' | tail -1)
  fi
  # the key index is written by the dispatch after the send returns (Java's reput as rmqd's): a query
  # can come first, so up to 2 more tries, 2 s apart (mqa_check)
  MQA_TRIES=3 mqa_check M16 "^${id:-NO_ID} " queryMsgByKey -t "$T" -k "mqakey_$rid"
  local qid="" qoff=""
  if mqa_check M17 "Keys: +\[mqakey_$rid\]" queryMsgByUniqueKey -t "$T" -i "${id:-NO_ID}"; then
    qid=$(printf '%s\n' "$MQA_LAST" | awk -F': *' '/^Queue ID:/{print $2; exit}')
    qoff=$(printf '%s\n' "$MQA_LAST" | awk -F': *' '/^Queue Offset:/{print $2; exit}')
  fi
  if mqa_check M19 "Keys: +\[mqakey_$rid\]" queryMsgByOffset -t "$T" -b "$BROKER_NAME" -i "${qid:-0}" -o "${qoff:-0}"; then
    off=$(printf '%s\n' "$MQA_LAST" | awk '/^OffsetID:/{print $2; exit}')
  fi
  mqa_check M18 "Keys: +\[mqakey_$rid\]" queryMsgById -i "${off:-NO_OFFSET_ID}"
  mqa_check M20 "^MSGID: [0-9A-F]+ MessageExt \[brokerName=$BROKER_NAME, queueId=0" printMsg -t "$T"
  mqa_check M21 "^$BROKER_NAME +0 +[0-9]+" resetOffsetByTime -g "$G" -t "$T" -s now
  mqa_check M22 "Consume ok" consumeMessage -t "$T" -c 2
  mqa_check M23 "^max: [0-9]+, min: 0" queryCq -t "$T" -q 0 -i 0 -c 2
  mqa_check M24 "^$T +$G " statsAll -t "$T"
  # $hold is the subshell running java_scenarios: stop its JVM child too (else it holds on for holdSeconds)
  local k kids; kids=$(ps -o pid= --ppid "$hold" 2>/dev/null)
  for k in $kids; do stop "$k" TERM 10; done
  stop "$hold" TERM 10
}

jc_mqadmin_line() {
  local A=$1 v=$JAVACLIENTS_MQADMIN_VERSION d cpf pre; d=$(jc_dir)
  cpf=$(jc_cpfile rocketmq-tools "$v"); pre=$(jc_mqa_prefix "$v")
  local expected; expected=$(jc_mqa_ids | paste -sd, -)
  if jc_only_applies && [[ ",$COMPAT_ONLY," != *",$pre-"* ]]; then return 0; fi
  if [ ! -s "$cpf" ]; then
    local i; for i in ${expected//,/ }; do record "$i" "mqadmin-$v" FAIL 0 "setup: rocketmq-tools $v not resolved (javaclients_setup)"; done
    return
  fi
  local home="$RUN_DIR/javaclients/mqadmin-$v-home"
  mkdir -p "$home/conf"
  # the 4.x MQAdminStartup configures logback from $ROCKETMQ_HOME/conf/logback_tools.xml: a minimal file of our own
  cat > "$home/conf/logback_tools.xml" <<'XML'
<configuration>
  <appender name="F" class="ch.qos.logback.core.FileAppender">
    <file>${user.home}/logs/tools.log</file>
    <encoder><pattern>%d %-5level %logger{32} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="F"/></root>
</configuration>
XML
  JC_MQA_CP=$(cat "$cpf"); JC_MQA_HOME=$home; JC_MQA_PRE=$pre; JC_MQA_CLIENT="mqadmin-$v"
  # swap in this version's mqadmin (lib.sh) and an id-prefixing record (run.sh) while the checks run
  eval "$(declare -f mqadmin | sed '1s/^mqadmin /_jc_saved_mqadmin /')"
  eval "$(declare -f record | sed '1s/^record /_jc_saved_record /')"
  mqadmin() {
    local sub=$1; shift
    timeout "${MQADMIN_TIMEOUT:-60}" env NAMESRV_ADDR="$NS_ADDR" ROCKETMQ_HOME="$JC_MQA_HOME" java -Xms64m -Xmx256m \
      -XX:TieredStopAtLevel=1 "${JAVA_COMMON[@]}" "${JC_OPENS[@]}" -Duser.home="$JC_MQA_HOME" \
      -Drocketmq.home.dir="$JC_MQA_HOME" -Drocketmq.namesrv.addr="$NS_ADDR" -cp "$JC_MQA_CP" \
      org.apache.rocketmq.tools.command.MQAdminStartup "$sub" -n "$NS_ADDR" "$@" 2>&1
  }
  record() { _jc_saved_record "$JC_MQA_PRE-$1" "$JC_MQA_CLIENT" "${@:3}"; }
  log "javaclients: mqadmin $v on $CUR_BROKER ($A)"
  local before; before=$(wc -l < "$RESULTS")
  jc_mqadmin_checks "$A" "${RID:-r$$}q${CUR_BROKER:0:1}"
  eval "$(declare -f _jc_saved_mqadmin | sed '1s/^_jc_saved_mqadmin /mqadmin /')"
  eval "$(declare -f _jc_saved_record | sed '1s/^_jc_saved_record /record /')"
  unset -f _jc_saved_mqadmin _jc_saved_record
  # every expected id reported (M11b is skipped when M11 fails)
  local i seen; seen=",$(tail -n +"$((before + 1))" "$RESULTS" | cut -f3 | paste -sd, -),"
  for i in ${expected//,/ }; do
    [[ $seen == *",$i,"* ]] || record "$i" "mqadmin-$v" FAIL 0 "not run (the check it depends on failed)"
  done
}

# jc_matrix : $RUN_DIR/javaclients-matrix.tsv from results.tsv (+ n/a cells) and the matrix on stderr
jc_matrix() {
  python3 - "$RESULTS" "$RUN_DIR/javaclients-matrix.tsv" "$(jc_versions)" "${JC_SCENARIOS[*]}" "$(jc_full && echo "$JAVACLIENTS_MQADMIN_VERSION")" <<'PY' >&2
import re, sys
res, out, versions, scen, mqa = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), sys.argv[5]
def has_lite(v):
    return tuple(int(x) for x in v.split(".")) >= (4, 6, 0)
rows = {}
brokers = []
for line in open(res, errors="replace"):
    f = line.rstrip("\n").split("\t")
    if len(f) < 7 or f[1] != "javaclients":
        continue
    b, _, sid, client, st, ms, det = f[:7]
    if b not in brokers:
        brokers.append(b)
    m = re.match(r"(?:java|mqadmin)-(.+)$", client)
    ver = m.group(1) if m else "?"
    sc = sid.split("-", 1)[1] if "-" in sid else sid
    fm = re.search(r"first=(\d+)ms", det)
    rows[(b, client, sc)] = (b, client, ver, sc, st, ms, fm.group(1) if fm else "", det)
for b in brokers:
    for v in versions:
        if not has_lite(v):
            rows.setdefault((b, "java-" + v, "LITEPULL"), (b, "java-" + v, v, "LITEPULL", "n/a", "0", "", "client line has no DefaultLitePullConsumer"))
with open(out, "w") as o:
    o.write("broker\tclient\tversion\tscenario\tstatus\tms\tfirst_ms\tdetail\n")
    for r in rows.values():
        o.write("\t".join(r) + "\n")
w = 11
for b in brokers:
    print("\nJava client matrix on the %s broker (cells: status [first ms]; records in results.tsv)" % b)
    print("%-10s" % "scenario" + "".join("%-*s" % (w + 3, "java-" + v) for v in versions))
    for sc in scen:
        cells = []
        for v in versions:
            r = rows.get((b, "java-" + v, sc))
            c = "-" if r is None else r[4] + (" " + r[6] if r[6] else "")
            cells.append("%-*s" % (w + 3, c))
        print("%-10s" % sc + "".join(cells))
    if mqa:
        mr = [r for k, r in rows.items() if k[0] == b and k[1] == "mqadmin-" + mqa]
        bad = sorted(r[3] for r in mr if r[4] != "PASS")
        print("mqadmin-%s: %d/%d PASS%s" % (mqa, len(mr) - len(bad), len(mr), (" (failed: " + ",".join(bad) + ")") if bad else ""))
print("matrix TSV: " + out)
PY
}

suite_javaclients() {
  local A=$1 v
  CUR_SUITE=javaclients
  if [ -z "${JC_SETUP_DONE:-}" ]; then
    javaclients_setup || log "javaclients: setup incomplete (see $(jc_dir)/target/setup.log)"
    JC_SETUP_DONE=1
  fi
  mkdir -p "$RUN_DIR/javaclients"
  for v in $(jc_versions); do jc_run_line "$A" "$v"; CUR_SUITE=javaclients; done
  if jc_full; then jc_mqadmin_line "$A"; CUR_SUITE=javaclients; fi
  jc_matrix
}
