# shellcheck shell=bash
# compat-tests/suites/pop.sh — plug-in suite "pop": POP consumption (RocketMQ 5.x, issue #22) with the REAL Java
# client 5.3.3 (a classic DefaultMQPushConsumer switched to POP: setClientRebalance(false), a concurrently listener,
# CLUSTERING, and the broker's mode for (topic, group) set to POP) and mqadmin 5.3.3. Scenarios in
# compat-tests/java/src/main/java/compat/Pop.java; each consumer records the request codes it sends (RPCHook) in
# $RUN_DIR/state/pop-wire-*.txt and a scenario fails when the client stayed on PULL.
#   POP-01  mqadmin updateTopic (4 queues) + setConsumeMode -m POP, then 50 messages sent before and 50 after the
#           consumer started: all 100 exactly once, every POP_CK receipt well formed (8 fields, retry mark 0, this
#           brokerName, invisibleTime 60000, queueId/offset of the message, 1ST_POP_TIME = popTime), one ACK_MESSAGE
#           per message, no PULL_MESSAGE on the topic, consume stats diff 0
#   POP-02  5 of 20 answer RECONSUME_LATER once: CHANGE_MESSAGE_INVISIBLETIME (10 s, the client's popDelayLevel[0]),
#           each comes back once from %RETRY%<group>_<topic> (retry mark 1, queue 0, reconsumeTimes 1, body/tags/
#           keys/user property kept, retry-queue offsets 0..4) no earlier than 9 s; the 15 others exactly once
#   POP-03  a child JVM pops 16 messages with popInvisibleTime 5000 (the client's minimum: [5000, 300000]) and is
#           killed with SIGKILL before acking; a new consumer of the group gets all 16 back from the retry topic
#           (retry-queue offsets 0..15, retry mark 1, reconsumeTimes 1, 1ST_POP_TIME = the killed consumer's popTime), none earlier than
#           popTime + 5 s (its invisibleTime), each once
#   POP-04  mqadmin: setConsumeMode answers "set consume mode to <addr> success", and consumerProgress of the
#           POP-01 group lists its topic with diff 0 on every queue ("Consume Diff Total: 0")
#   POP-05  SET_MESSAGE_REQUEST_MODE (DefaultMQAdminExt) refused: unknown topic 17, %RETRY% topic 16
# Java 5.3.3 oracle timings (2-core box, shared): see the comments in Pop.java and tests/golden/pop/notes.md.
# In the default COMPAT_SUITES (about 70 s per broker); alone: COMPAT_SUITES=pop compat-tests/run.sh

PLUGIN_SUITES+=(pop)

pop_ids() { echo POP-01 POP-02 POP-03 POP-04 POP-05; }
pop_client_of() { case $1 in POP-04) echo mqadmin ;; *) echo java ;; esac; }

suite_pop() { # suite_pop <broker addr>
  local A=$1 port=${1##*:} rid="${RID}${CUR_BROKER:0:1}" out ids
  ids=$(filter_only $(pop_ids) | paste -sd' ')
  [ -n "$ids" ] || return 0
  out="$RUN_DIR/pop-$CUR_BROKER"; mkdir -p "$out"
  local T="POP01_${rid}_t" G="POP01_${rid}_g" t0=$SECONDS jopt=() mode_ok=0 mode_detail=""
  if [[ " $ids " == *" POP-01 "* || " $ids " == *" POP-04 "* ]]; then
    mqadmin updateTopic -b "$A" -t "$T" -r 4 -w 4 | grep -v '^SLF4J' > "$out/updateTopic.out"
    # the group does not exist yet: autoCreateSubscriptionGroup=true (conf/broker.conf.tmpl) creates it, as Java does
    mqadmin setConsumeMode -b "$A" -t "$T" -g "$G" -m POP | grep -v '^SLF4J' > "$out/setConsumeMode.out"
    if grep -q "create topic to 127\.0\.0\.1:$port success" "$out/updateTopic.out" \
      && grep -q "set consume mode to 127\.0\.0\.1:$port success" "$out/setConsumeMode.out" \
      && grep -q "topic\[$T\] group\[$G\] consume mode\[POP\] popShareQueueNum\[0\]" "$out/setConsumeMode.out" \
      && ! grep -Eq -- "$MQA_BAD" "$out/setConsumeMode.out"; then
      mode_ok=1; jopt=(-Dcompat.pop.modeSetBy=mqadmin)
    else
      mode_detail="mqadmin updateTopic/setConsumeMode failed: $(cat "$out/updateTopic.out" "$out/setConsumeMode.out" | grep -Ev '^\s*$' | head -c 300 | tr '\n' ' ')"
    fi
  fi
  local jids; jids=$(printf '%s\n' $ids | grep -v '^POP-04$' | paste -sd,)
  [ -n "$jids" ] && run_main 600 "${jopt[@]}" -- --broker-addr "$A" --only "$jids" --run-id "$rid"
  if [[ " $ids " == *" POP-04 "* ]]; then
    local s=$SECONDS try prog ok=0
    if [ $mode_ok = 0 ]; then
      record POP-04 mqadmin FAIL $(( (SECONDS - t0) * 1000 )) "$mode_detail"
      return 0
    fi
    # consumerProgress after POP-01 (its consumer is gone: no client IP column): rows
    # "<topic> <broker> <qid> <brokerOffset> <consumerOffset> <diff> <inflight> <lastTime>"
    for try in 1 2 3; do
      mqadmin consumerProgress -g "$G" | grep -v '^SLF4J' > "$out/consumerProgress.out"
      prog=$(awk -v t="$T" -v b="$BROKER_NAME" '$1==t && $2==b {n++; if ($4==$5 && $6==0) z++; s+=$4} END{printf "%d %d %d", n, z, s}' "$out/consumerProgress.out")
      if [ "$prog" = "4 4 100" ] && grep -q '^Consume Diff Total: 0$' "$out/consumerProgress.out" && ! grep -Eq -- "$MQA_BAD" "$out/consumerProgress.out"; then
        ok=1; break
      fi
      sleep 2
    done
    if [ $ok = 1 ]; then
      record POP-04 mqadmin PASS $(( (SECONDS - s) * 1000 )) "setConsumeMode -m POP: success; consumerProgress -g $G: 4 queues of $T, 100 messages, diff 0"
    else
      record POP-04 mqadmin FAIL $(( (SECONDS - s) * 1000 )) "setConsumeMode ok; consumerProgress -g $G: rows/diff0/brokerOffsets = '$prog' (want '4 4 100' and Consume Diff Total: 0): $(head -c 400 "$out/consumerProgress.out" | tr '\n' ' ')"
    fi
  fi
}
