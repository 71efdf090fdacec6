# compat-tests/suites/prom.sh — plug-in suite "prom": the broker's Prometheus /metrics
# (metricsExporterType=PROM, on listenPort + 3, see conf/broker.conf.tmpl), issue #21 item 1.
# The same workload on each broker (3 sends with mqadmin, then mqadmin consumeMessage, a lite-pull
# consumer that pulls with its subscription and heartbeats none), then one scrape:
#   P01  every family the Java oracle shows after the workload, rmqd shows with the same TYPE and
#        label keys — except the families of features rmqd does not have yet (PROM_NOT_BUILT
#        below), named in the detail; rocketmq_* families only rmqd shows are listed
#   P02  rocketmq_messages_in_total{topic=<workload topic>,message_type="normal"} = 3 (the sends)
#   P03  rocketmq_consumer_lag_messages is reported for the tool's group (TOOLS_CONSUMER) on the
#        topic, and is 0
# shellcheck shell=bash

PLUGIN_SUITES+=(prom)
# rmqd has no pop buffer (Java's enablePopBufferMerge, off by default): no buffer-scan histogram.
PROM_NOT_BUILT='^rocketmq_pop_buffer_scan_time_consume'

prom_ids() { echo P01 P02 P03; }

# prom_families <scrape> -> "family kind label,keys" per series kind, sorted and unique
prom_families() {
  awk '
    /^# TYPE / { type[$3] = $4; next }
    /^#/ || /^target_info/ || /^otel_scope_info/ || NF == 0 { next }
    {
      name = $0; sub(/\{.*/, "", name)
      labels = $0; sub(/^[^{]*\{/, "", labels); sub(/\}[^}]*$/, "", labels)
      fam = name
      if (!(fam in type)) sub(/_(bucket|count|sum)$/, "", fam)
      if (!(fam in type)) sub(/_(milliseconds|bytes)$/, "", fam)
      n = split(labels, kv, /",/); keys = ""
      for (i = 1; i <= n; i++) { k = kv[i]; sub(/=.*/, "", k); if (k != "otel_scope_name" && k != "le") keys = keys k "," }
      print fam, type[fam], keys
    }' "$1" | awk '{ split($3, a, ","); n = 0; for (i in a) if (a[i] != "") b[++n] = a[i];
                     # sort the label keys
                     for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
                     s = ""; for (i = 1; i <= n; i++) s = s b[i] ","; delete b; print $1, $2, s }' | sort -u
}

suite_prom() { # suite_prom <broker addr>
  local A=$1 port=${1##*:} t0=$SECONDS out T="PROM_$RID" scrape fam ids
  ids=$(filter_only P01 P02 P03 | paste -sd' ')
  [ -n "$ids" ] || return 0
  out="$RUN_DIR/prom-$CUR_BROKER"; mkdir -p "$out"
  local mport=$((port + 3)) i
  for i in 1 2 3; do
    mqadmin sendMessage -t "$T" -p "prom body $i" -k "promkey$i" > "$out/send-$i.out" 2>&1
  done
  mqadmin consumeMessage -t "$T" -c 3 > "$out/consume.out" 2>&1
  scrape="$out/metrics.txt"
  if ! curl -s --max-time 20 "http://127.0.0.1:$mport/metrics" > "$scrape" || [ ! -s "$scrape" ]; then
    fail_all "no /metrics on 127.0.0.1:$mport (metricsExporterType=PROM in broker.conf)" $ids
    return 0
  fi
  prom_families "$scrape" > "$out/families.txt"
  local ms=$(( (SECONDS - t0) * 1000 ))

  # P01: compare with the oracle's families (recorded in the Java run)
  if [ "$CUR_BROKER" = java ]; then
    cp "$out/families.txt" "$RUN_DIR/prom-java-families.txt"
    record P01 prometheus PASS "$ms" "oracle: $(wc -l < "$out/families.txt") family/label sets recorded"
  elif [ ! -s "$RUN_DIR/prom-java-families.txt" ]; then
    record P01 prometheus FAIL "$ms" "no oracle families recorded (Java run missing)"
  else
    local jfam="$RUN_DIR/prom-java-families.txt" missing differ skipped
    names() { awk '{print $1}' "$1" | sort -u; }
    skipped=$(names "$jfam" | grep -E "$PROM_NOT_BUILT" | paste -sd' ')
    missing=""; differ=""
    for fam in $(names "$jfam" | grep -vE "$PROM_NOT_BUILT"); do
      if ! grep -q "^$fam " "$out/families.txt"; then
        missing+=" $fam"
      elif ! diff <(grep "^$fam " "$jfam") <(grep "^$fam " "$out/families.txt") > /dev/null; then
        differ+=" $fam[java: $(grep "^$fam " "$jfam" | cut -d' ' -f2- | paste -sd';') rmqd: $(grep "^$fam " "$out/families.txt" | cut -d' ' -f2- | paste -sd';')]"
      fi
    done
    local only_rmqd
    only_rmqd=$(comm -13 <(names "$jfam") <(names "$out/families.txt") | grep -v '^rmqd_' | paste -sd' ')
    if [ -z "$missing" ] && [ -z "$differ" ]; then
      record P01 prometheus PASS "$ms" "every family Java shows after this workload, with the same TYPE and label keys; not built yet: ${skipped:-none}; rocketmq_* only on rmqd: ${only_rmqd:-none}"
    else
      record P01 prometheus FAIL "$ms" "missing on rmqd:${missing:- none}; different TYPE or labels:${differ:- none}"
    fi
  fi

  # P02: messages in for the workload topic
  local v
  v=$(grep -E "^rocketmq_messages_in_total\{[^}]*message_type=\"normal\"[^}]*topic=\"$T\"" "$scrape" | awk '{print $2}' | head -1)
  if [ "${v%.*}" = 3 ]; then
    record P02 prometheus PASS "$ms" "rocketmq_messages_in_total{topic=$T,normal} = $v"
  else
    record P02 prometheus FAIL "$ms" "rocketmq_messages_in_total{topic=$T,normal} = '${v:-absent}', want 3 (3 acknowledged sends)"
  fi
  # P03: lag for the tool's group (it pulled with its subscription)
  v=$(grep -E "^rocketmq_consumer_lag_messages\{[^}]*consumer_group=\"TOOLS_CONSUMER\"[^}]*topic=\"$T\"" "$scrape" | awk '{print $2}' | head -1)
  if [ -n "$v" ] && [ "${v%.*}" = 0 ]; then
    record P03 prometheus PASS "$ms" "rocketmq_consumer_lag_messages{topic=$T} = $v"
  else
    record P03 prometheus FAIL "$ms" "rocketmq_consumer_lag_messages{topic=$T} = '${v:-absent}', want 0 (the group never committed: lag counts from the max)"
  fi
}
prom_client_of() { echo prometheus; }
