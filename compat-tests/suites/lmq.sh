# shellcheck shell=bash
# compat-tests/suites/lmq.sh — plug-in suite "lmq": LMQ (light message queues, multi-dispatch) with the REAL Java
# client 5.3.3, patterns of example/.../lmq/ at rocketmq-all-5.3.3. Scenarios in compat-tests/java/src/main/java/compat/Lmq.java.
# The suite needs enableLmq=true and enableMultiDispatch=true. It does NOT put them into conf/broker.conf.tmpl: with
# enableLmq the Java broker reads and writes config/lmqConsumerOffset.json INSTEAD of consumerOffset.json
# (LmqConsumerOffsetManager.configFilePath), which would change what the swap suites take over. So the suite stops
# the suite-wide broker, starts the same kind of broker with the two keys on a FRESH store ($RUN_DIR/<kind>-lmq),
# restarts it twice (SIGTERM, SIGKILL), stops it, checks its store, and brings the suite-wide broker back for the next suites.
# Every name in the workload is fixed (not run-id based): the store is fresh, and the LMQ consume queues are compared
# byte for byte with Java's (LMQ-CQ).
#   LMQ-01  parent topic LmqParent (1 queue) created; 12 sends with INNER_MULTI_DISPATCH = "%LMQ%lmq_a,%LMQ%lmq_b",
#           "%LMQ%lmq_a" or "%LMQ%lmq_b,%LMQ%lmq_a" (i % 3) and one without: SEND_OK, parent queue offsets 0..12
#   LMQ-02  DefaultMQPullConsumer on MessageQueue(%LMQ%x, broker, 0) (LMQPullConsumer): lmq_a 12 msgs, lmq_b 8, in order,
#           INNER_MULTI_QUEUE_OFFSET = the LMQ offsets in INNER_MULTI_DISPATCH order, this LMQ's element = its position,
#           the records are the parent's (topic LmqParent, queue 0, parent queue offset); a window from 5; NO_NEW_MSG at 12;
#           the plain message in no LMQ; (reported) WAIT kept, pulling queue 1 of an LMQ
#   LMQ-03  UPDATE_CONSUMER_OFFSET / QUERY_CONSUMER_OFFSET on lmq_a: normal group 7, %LMQ% group 5 (any queue id),
#           unknown groups 0 (setZeroIfNotFound) or 22
#   LMQ-04  GET_MAX_OFFSET 12/8, GET_MIN_OFFSET 0, unknown LMQ 0/0, SEARCH_OFFSET_BY_TIMESTAMP, consumer.maxOffset/minOffset,
#           GET_CONSUME_STATS (group, %LMQ%lmq_a): one row (lmq_a, broker, 0) brokerOffset 12, consumerOffset 7 / 5
#   LMQ-05  the NameServer has no route for %LMQ%lmq_a (TOPIC_NOT_EXIST 17)
#   LMQ-06  push consumer with an injected route (LMQPushConsumer): all 12 of lmq_a over PULL_MESSAGE, offset 12 committed
#   ---     broker restart (SIGTERM, same store)
#   LMQ-08  max offsets 12/8; 3 more sends continue the LMQ offsets (a 12..14, b 8..9), all pulled; offsets kept (7, 5, 12)
#   ---     broker restart (SIGKILL: abnormal recovery, same store)
#   LMQ-09  max offsets 15/10 recovered; 3 more sends continue (a 15..17, b 10..11), all pulled; offsets kept
#   LMQ-07  POP-mode push consumer on lmq_b (LMQPushPopConsumer: setMessageRequestMode POP, clientRebalance false,
#           injected route): all 12 popped and acked once; the client shows topic = the LMQ, the parent's queue id/offset,
#           POP_CK ending "<broker> 0 <LMQ offset>"
#   ---     broker stopped (SIGTERM)
#   LMQ-CQ  consumequeue/%LMQ%lmq_a/0, %LMQ%lmq_b/0 and LmqParent/0: the used 20-byte units (commit-log offset, size,
#           tagsCode) equal tests/golden/lmq (java) or this run's Java store (rmqd; golden when Java did not run)
#   LMQ-JSON config/lmqConsumerOffset.json: offsetTable "%LMQ%lmq_a@LMQ_PULL_G" {0: 7}, "%LMQ%lmq_a@LMQ_PUSH_G" {0: 12},
#           lmqOffsetTable "%LMQ%lmq_a@%LMQ%lmq_g" 5; no consumerOffset.json
# LMQ_CAPTURE_GOLDEN=1 copies the Java store's units and lmqConsumerOffset.json into tests/golden/lmq (see notes.md there).
# Alone: COMPAT_SUITES=lmq compat-tests/run.sh

PLUGIN_SUITES+=(lmq)

lmq_ids() { echo LMQ-01 LMQ-02 LMQ-03 LMQ-04 LMQ-05 LMQ-06 LMQ-08 LMQ-09 LMQ-07 LMQ-CQ LMQ-JSON; }
# LMQ-CQ and LMQ-JSON check the store the Java client workload left: counted under the Java client (compat-table.py)
lmq_client_of() { echo java; }

suite_lmq() { # suite_lmq <broker addr>
  local A=$1 port=${1##*:} kind=$CUR_BROKER rid="${RID}${CUR_BROKER:0:1}l" ids
  ids=$(filter_only $(lmq_ids) | paste -sd' ')
  [ -n "$ids" ] || return 0
  local base="$RUN_DIR/$kind-broker/broker.conf" dir="$RUN_DIR/$kind-lmq" t0=$SECONDS
  rm -rf "$dir"; mkdir -p "$dir"
  render_broker_conf "$dir/broker.conf" "$port" "$dir/store"
  printf '# lmq suite (compat-tests/suites/lmq.sh)\nenableLmq=true\nenableMultiDispatch=true\n' >> "$dir/broker.conf"
  log "lmq: stopping the suite-wide $kind broker, starting one with enableLmq/enableMultiDispatch on a fresh store"
  stop_broker TERM 60
  wait_port_closed 127.0.0.1 "$port" 20
  if ! start_broker "$kind" "$dir/broker.conf"; then
    fail_all "$kind broker with enableLmq did not start: $(tail -n 3 "$BROKER_LOG" 2>/dev/null | tr '\n' ' ' | cut -c1-200)" $ids
  else
    local j1
    j1=$(printf '%s\n' $ids | grep -E '^LMQ-0[1-6]$' | paste -sd,)
    [ -n "$j1" ] && run_main 500 -- --broker-addr "$A" --only "$j1" --run-id "$rid"
    # restart 1 (SIGTERM) -> LMQ-08; restart 2 (SIGKILL) -> LMQ-09, then LMQ-07 (its pop traffic writes revive records
    # into the commit log: it must come after every compared send)
    local sig phase
    for sig in TERM KILL; do
      if [ $sig = TERM ]; then phase=$(printf '%s\n' $ids | grep -E '^LMQ-08$' | paste -sd,)
      else phase=$(printf '%s\n' $ids | grep -E '^LMQ-0[79]$' | sort -r | paste -sd,); fi
      [ -n "$phase" ] || continue
      stop_broker "$sig" 60
      wait_port_closed 127.0.0.1 "$port" 20
      echo "----- lmq suite: restart after SIG$sig -----" >> "$BROKER_LOG"
      if ! start_broker "$kind" "$dir/broker.conf"; then
        fail_all "$kind broker (enableLmq) did not come back after SIG$sig" ${phase//,/ }
        break
      fi
      run_main 400 -- --broker-addr "$A" --only "$phase" --run-id "$rid"
    done
    stop_broker TERM 60
    wait_port_closed 127.0.0.1 "$port" 20
    lmq_store_checks "$kind" "$dir/store" "$ids"
  fi
  log "lmq: $kind part took $((SECONDS - t0)) s; restarting the suite-wide broker"
  if ! start_broker "$kind" "$base"; then
    log "lmq: the suite-wide $kind broker did not come back: the following suites will fail"
  fi
}

# lmq_store_checks <kind> <store dir> <ids> : LMQ-CQ and LMQ-JSON on a stopped broker's store
lmq_store_checks() {
  local kind=$1 store=$2 ids=" $3 " s out ref st
  local golden="$REPO_DIR/tests/golden/lmq"
  if [[ $ids == *" LMQ-CQ "* ]]; then
    s=$SECONDS
    if [ "$kind" = java ] && [ "${LMQ_CAPTURE_GOLDEN:-0}" = 1 ]; then
      python3 "$COMPAT_DIR/lmq_store.py" capture "$store" "$golden" >&2
    fi
    ref=$golden
    if [ "$kind" = rmqd ] && [ -d "$RUN_DIR/java-lmq/store/consumequeue" ]; then ref="$RUN_DIR/java-lmq/store"; fi
    out=$(python3 "$COMPAT_DIR/lmq_store.py" compare "$store" "$ref" 2>&1); st=$?
    record LMQ-CQ java "$([ $st = 0 ] && echo PASS || echo FAIL)" $(( (SECONDS - s) * 1000 )) "vs ${ref#"$REPO_DIR/"}: $out"
  fi
  if [[ $ids == *" LMQ-JSON "* ]]; then
    s=$SECONDS
    out=$(python3 "$COMPAT_DIR/lmq_store.py" offsets "$store" 2>&1); st=$?
    record LMQ-JSON java "$([ $st = 0 ] && echo PASS || echo FAIL)" $(( (SECONDS - s) * 1000 )) "$out"
  fi
}
