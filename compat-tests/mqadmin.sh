# shellcheck shell=bash
# compat-tests/mqadmin.sh — mqadmin checks (real org.apache.rocketmq.tools.command.MQAdminStartup) against one
# broker. Sourced by run.sh after lib.sh; needs `record <id> <client> <status> <ms> <detail>` from run.sh.
# MQAdminStartup exits 0 even when the command fails, so every check asserts on the OUTPUT: an expected regex
# must match and no exception / usage text may appear.

# failure markers: a stack trace / exception line at line start, the CLI's own failure and usage texts.
# (Exception names in the middle of a line are legitimate: e.g. queryMsgByUniqueKey prints MessageTrack rows.)
MQA_BAD='^[[:space:]]*at [a-zA-Z_$.]+\(|^[a-zA-Z_$.]+(Exception|Error)(: |$)|Exception in thread|command failed|^usage: |Usage: mqadmin'

# mqa_check <id> <expected-ERE> <subcommand> [args...]   (MQA_TRIES=n: retry n times, 2 s apart, until it matches)
mqa_check() {
  local id=$1 re=$2; shift 2
  local t0=$SECONDS out f="$MQA_OUT/$id.out" detail try=1
  while :; do
    out=$(mqadmin "$@" | grep -v '^SLF4J')
    printf '$ mqadmin %s\n%s\n' "$*" "$out" > "$f"
    if [ "$try" -ge "${MQA_TRIES:-1}" ] || printf '%s\n' "$out" | grep -Eq -- "$re"; then break; fi
    try=$((try + 1)); sleep 2
  done
  local ms=$(( (SECONDS - t0) * 1000 ))
  if printf '%s\n' "$out" | grep -Eq -- "$re" && ! printf '%s\n' "$out" | grep -Eq -- "$MQA_BAD"; then
    record "$id" mqadmin PASS "$ms" "mqadmin $1: output matches /$re/"
    MQA_LAST="$out"; return 0
  fi
  detail=$(printf '%s\n' "$out" | grep -E -m2 -- "$MQA_BAD" | tr '\n' ' ' | cut -c1-300)
  [ -n "$detail" ] || detail="expected /$re/ not found; output: $(printf '%s' "$out" | head -c 300 | tr '\n' ' ')"
  record "$id" mqadmin FAIL "$ms" "mqadmin $*: $detail"
  MQA_LAST="$out"; return 1
}

# mqadmin_suite <broker_addr> <run_id>
# Starts a helper JVM (compat.Main HOLD) that keeps a producer + consumer online on MQA_<run_id>, then runs the checks.
mqadmin_suite() {
  local A=$1 rid=$2 port=${1##*:}
  local T="MQA_$rid" G="MQAG_$rid" P="MQAP_$rid" XT="MQAX_$rid" XG="MQAXG_$rid"
  MQA_OUT="$RUN_DIR/mqadmin-$rid"; mkdir -p "$MQA_OUT"
  java_scenarios -Dcompat.holdSeconds=240 -- --broker-addr "$A" --broker-name "$BROKER_NAME" --only HOLD --run-id "$rid" \
    > "$MQA_OUT/hold.out" 2>&1 &
  local hold=$!
  if ! wait_log "$MQA_OUT/hold.out" 'HOLD-READY|"status":"FAIL"' 90 "$hold" || grep -q '"status":"FAIL"' "$MQA_OUT/hold.out"; then
    log "mqadmin helper (producer/consumer) did not come up: $(grep -m1 '"id"' "$MQA_OUT/hold.out" | cut -c1-300)"
  fi
  MQA_TRIES=10 mqa_check M01 "$CLUSTER_NAME +$BROKER_NAME +0 +127\.0\.0\.1:$port" clusterList
  mqa_check M02 'brokerVersionDesc +:' brokerStatus -b "$A"
  MQA_TRIES=5 mqa_check M03 "^$T\$" topicList
  mqa_check M04 "\"127\.0\.0\.1:$port\"" topicRoute -t "$T"
  mqa_check M05 "^$BROKER_NAME +0 +[0-9]+ +[0-9]+" topicStatus -t "$T"
  mqa_check M06 "create topic to 127\.0\.0\.1:$port success" updateTopic -b "$A" -t "$XT" -r 2 -w 2
  mqa_check M07 "delete topic \[$XT\] from cluster \[$CLUSTER_NAME\] success" deleteTopic -c "$CLUSTER_NAME" -t "$XT"
  mqa_check M08 "create subscription group to 127\.0\.0\.1:$port success" updateSubGroup -b "$A" -g "$XG"
  mqa_check M09 "delete subscription group \[$XG\] from broker \[127\.0\.0\.1:$port\] success" deleteSubGroup -b "$A" -g "$XG"
  mqa_check M10 "^brokerName *= *$BROKER_NAME" getBrokerConfig -b "$A"
  if mqa_check M11 "update broker config success" updateBrokerConfig -b "$A" -k flushIntervalCommitLog -v 600; then
    mqa_check M11b "^flushIntervalCommitLog *= *600" getBrokerConfig -b "$A"
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
  mqa_check M18 "Keys: +\[mqakey_$rid\]" queryMsgById -t "$T" -i "${off:-NO_OFFSET_ID}"
  mqa_check M20 "^MSGID: [0-9A-F]+ MessageExt \[brokerName=$BROKER_NAME, queueId=0" printMsg -t "$T"
  mqa_check M21 "^$BROKER_NAME +0 +[0-9]+" resetOffsetByTime -g "$G" -t "$T" -s now
  mqa_check M22 "Consume ok" consumeMessage -t "$T" -c 2
  mqa_check M23 "^max: [0-9]+, min: 0" queryCq -t "$T" -q 0 -i 0 -c 2
  mqa_check M24 "^$T +$G " statsAll -t "$T"
  # -a prints a topic only when VIEW_BROKER_STATS_DATA (315) counted messages in (or out) for it;
  # the line's InMsg24Hour column must be non-zero. A fresh send first: Java's minute window holds
  # a put from the 10 s sample after it for 60 s, and its hour window only from the next 10-minute
  # tick, so the helper's sends of minutes ago may show nowhere (a Java run failed so). Java samples
  # every 10 s: three tries (~20 s) cover one sample after the send
  mqadmin sendMessage -t "$T" -p "statsAll probe" > "$MQA_OUT/M24b-send.out" 2>&1
  MQA_TRIES=3 mqa_check M24b "^$T +$G +[0-9]+ +[0-9.]+ +[0-9.]+ +[1-9][0-9]* +[0-9]+" statsAll -a -t "$T"
  # UPDATE_AND_CREATE_TOPIC_LIST (18) / UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225): a JSON list of TopicConfig /
  # SubscriptionGroupConfig from a file; the route (through the NameServer) and the group's config show what was written
  local LT1="MQAL1_$rid" LT2="MQAL2_$rid" LG="MQALG_$rid"
  printf '[{"topicName":"%s","readQueueNums":3,"writeQueueNums":3,"perm":6},{"topicName":"%s","readQueueNums":2,"writeQueueNums":2,"perm":4}]\n' \
    "$LT1" "$LT2" > "$MQA_OUT/topic-list.json"
  printf '[{"groupName":"%s","retryMaxTimes":5,"consumeBroadcastEnable":true}]\n' "$LG" > "$MQA_OUT/group-list.json"
  if mqa_check M27 "submit batch of topic config to 127\.0\.0\.1:$port success" updateTopicList -b "$A" -f "$MQA_OUT/topic-list.json"; then
    MQA_TRIES=3 mqa_check M27b '"writeQueueNums":3' topicRoute -t "$LT1"
    MQA_TRIES=3 mqa_check M27c '"perm":4' topicRoute -t "$LT2"
  fi
  if mqa_check M28 "submit batch of group config to 127\.0\.0\.1:$port success" updateSubGroupList -b "$A" -f "$MQA_OUT/group-list.json"; then
    mqa_check M28b "^retryMaxTimes +=  5\$" getConsumerConfig -g "$LG"
  fi
  mqa_check M25 "^commitLogDirCapacity +: Total : [0-9.]+ [KMGTPE]?i?B, Free : " brokerStatus -b "$A"
  # GET_ALL_PRODUCER_INFO (328): the helper's producer, by group
  mqa_check M26 "^producer group \($P\) instance : clientId=[^,]+,remoteIP=/127\.0\.0\.1:[0-9]+, language=JAVA, version=[0-9]+, lastUpdateTimestamp=[0-9]+" producer -b "$A"
  # $hold is the subshell running java_scenarios: stop its JVM child too (else it holds on for holdSeconds)
  local k kids; kids=$(ps -o pid= --ppid "$hold" 2>/dev/null)
  for k in $kids; do stop "$k" TERM 10; done
  stop "$hold" TERM 10
}
